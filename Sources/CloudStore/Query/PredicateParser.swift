import Foundation

/// Parses NSPredicate's format language as far as CloudKit accepts it.
///
/// Accepted: `==` (`=`), `!=` (`<>`), `<`, `<=`, `>`, `>=`, `BETWEEN {a, b}`, `IN {…}`,
/// `BEGINSWITH`, `CONTAINS` (list membership, and `'x' IN listKey`), `self CONTAINS 'text'`
/// and `allTokens TOKENMATCHES[cdl] 'text'`, `distanceToLocation:fromLocation:(key, loc) < r`,
/// `AND` (`&&`), `NOT` (`!`), parentheses, `TRUEPREDICATE`; strings, numbers, `YES`/`NO`,
/// `{lists}`, `CAST(seconds since 2001, "NSDate")`, `now()`, `%@` and `%K`; and ckfs's literals
/// `LOCATION(lat, lon)` and `REFERENCE("recordName")` for what has no format text in
/// NSPredicate. Everything else CloudKit rejects (`OR`, `LIKE`, `MATCHES`, `ENDSWITH`, key
/// paths, aggregates, `[c]` options, arithmetic, `nil`, `$variables`) fails with an error that
/// names the construct and its position.
package struct PredicateParser {
    /// What is wrong and where: the package's one syntax error, placed at a character of the
    /// one-line format text.
    package typealias SyntaxError = CloudStore.SyntaxError

    private var tokens: [PredicateLexer.Located]
    private var index = 0
    private let arguments: [PredicateValue]
    private var nextArgument = 0
    private var depth = 0

    /// Parses `format`, taking `%@` values and `%K` keys (as `.string`) from `arguments` in order.
    public static func parse(_ format: String, arguments: [PredicateValue] = []) throws(SyntaxError) -> QueryPredicate {
        let tokens: [PredicateLexer.Located]
        do { tokens = try PredicateLexer.tokens(format) } catch { throw SyntaxError(message: error.message, position: error.position) }
        var parser = PredicateParser(tokens: tokens, arguments: arguments)
        if parser.peek.token == .end { throw SyntaxError(message: "the predicate is empty; use TRUEPREDICATE for every record", position: 1) }
        let predicate = try parser.conjunction()
        if parser.peek.token != .end {
            throw parser.error("unexpected \(parser.describe(parser.peek.token)) after a complete predicate", at: parser.peek)
        }
        if parser.nextArgument < arguments.count {
            throw SyntaxError(message: "\(arguments.count) arguments given but the format uses \(parser.nextArgument)", position: format.unicodeScalars.count + 1)
        }
        return predicate
    }

    /// The last letters of C conversions that stand for a number argument.
    static let numberConversions: Set<Character> = ["d", "D", "i", "u", "U", "f", "F", "g", "G", "e", "E"]

    private init(tokens: [PredicateLexer.Located], arguments: [PredicateValue]) {
        self.tokens = tokens
        self.arguments = arguments
    }

    // MARK: Tokens

    private var peek: PredicateLexer.Located { tokens[index] }

    @discardableResult
    private mutating func next() -> PredicateLexer.Located {
        let t = tokens[index]
        if index < tokens.count - 1 { index += 1 }
        return t
    }

    private func error(_ message: String, at t: PredicateLexer.Located) -> SyntaxError {
        SyntaxError(message: message, position: t.position)
    }

    private func unsupported(_ construct: String, at t: PredicateLexer.Located, _ hint: String = "") -> SyntaxError {
        error("\(construct) is not supported in CloudKit queries" + (hint.isEmpty ? "" : "; " + hint), at: t)
    }

    private func describe(_ token: PredicateLexer.Token) -> String {
        switch token {
        case .identifier(let s): "the name \(s)"
        case .keyword(let k): k
        case .string(let s): "the string \(PredicatePrinter.string(s))"
        case .int(let i): "the number \(i)"
        case .double(let d): "the number \(d)"
        case .symbol(let s): "'\(s)'"
        case .format(let f): f
        case .variable(let v): "$\(v)"
        case .end: "the end of the predicate"
        }
    }

    private mutating func expect(_ symbol: String, _ what: String) throws(SyntaxError) {
        guard peek.token == .symbol(symbol) else { throw error("expected '\(symbol)' \(what), found \(describe(peek.token))", at: peek) }
        next()
    }

    // MARK: Predicates

    private mutating func conjunction() throws(SyntaxError) -> QueryPredicate {
        var parts = [try unary()]
        while true {
            let t = peek
            if t.token == .keyword("AND") || t.token == .symbol("&&") {
                next()
                parts.append(try unary())
            } else if t.token == .keyword("OR") || t.token == .symbol("||") {
                throw unsupported("OR", at: t, "run one query per alternative and merge the results, or use IN for one key")
            } else {
                break
            }
        }
        return parts.count == 1 ? parts[0] : .and(parts)
    }

    private mutating func unary() throws(SyntaxError) -> QueryPredicate {
        let t = peek
        depth += 1
        defer { depth -= 1 }
        if depth > 100 { throw error("the predicate nests deeper than 100 levels", at: t) }
        switch t.token {
        case .keyword("NOT"), .symbol("!"):
            next()
            return .not(try unary())
        case .symbol("("):
            next()
            let inner = try conjunction()
            try expect(")", "to close the '(' at character \(t.position)")
            return inner
        case .keyword("TRUEPREDICATE"):
            next()
            return .all
        case .keyword("FALSEPREDICATE"):
            throw unsupported("FALSEPREDICATE", at: t, "a query that matches nothing needs no query")
        default:
            return try comparison()
        }
    }

    /// One side of a comparison: a key or a constant.
    private enum Side {
        case key(String)
        case value(PredicateValue)
    }

    private mutating func comparison() throws(SyntaxError) -> QueryPredicate {
        let t = peek
        switch t.token {
        case .keyword("SELF"):
            next()
            guard peek.token == .keyword("CONTAINS") else { throw unsupported("SELF with \(describe(peek.token))", at: peek, "only `self CONTAINS 'text'` is") }
            next()
            try noOptions()
            return .tokens(try tokenText())
        case .identifier(let name) where name == "allTokens":
            next()
            guard peek.token == .keyword("TOKENMATCHES") else { throw error("expected TOKENMATCHES after allTokens, found \(describe(peek.token))", at: peek) }
            next()
            if peek.token == .symbol("[") {
                while next().token != .symbol("]") { if peek.token == .end { throw error("'[' is never closed", at: peek) } }
            }
            return .tokens(try tokenText())
        case .identifier(let name) where name.hasPrefix("distanceToLocation:"):
            guard name == "distanceToLocation:fromLocation:" else { throw unsupported("the function \(name)", at: t, "the one function is distanceToLocation:fromLocation:") }
            next()
            try expect("(", "after distanceToLocation:fromLocation:")
            guard case .key(let key) = try side() else { throw error("distanceToLocation:fromLocation: takes a location field first", at: t) }
            try expect(",", "between the field and the location")
            let locTok = peek
            guard case .value(.location(let location)) = try side() else { throw error("distanceToLocation:fromLocation: takes a location second (LOCATION(lat, lon) or %@)", at: locTok) }
            try expect(")", "after the location")
            let opTok = peek
            guard let op = try comparisonOperator(), op != .equal, op != .notEqual else {
                throw error("compare a distance with <, <=, > or >= and a number of metres", at: opTok)
            }
            let radiusTok = peek
            let radius: Double
            switch try side() {
            case .value(.int(let i)): radius = Double(i)
            case .value(.double(let d)): radius = d
            default: throw error("a distance is compared with a number of metres", at: radiusTok)
            }
            return .distance(key, location, op, radius)
        case .keyword(let k) where ["ANY", "ALL", "SOME", "NONE"].contains(k):
            throw unsupported("the aggregate \(k)", at: t, "use CONTAINS to test a list field")
        case .keyword(let k) where ["SUBQUERY", "FUNCTION"].contains(k):
            throw unsupported(k, at: t)
        default:
            break
        }
        let left = try side()
        let opTok = peek
        switch opTok.token {
        case .keyword("BETWEEN"):
            next()
            try noOptions()
            guard case .key(let key) = left else { throw error("BETWEEN needs a field on its left", at: opTok) }
            let boundsTok = peek
            guard case .value(.list(let bounds)) = try side(), bounds.count == 2 else { throw error("BETWEEN takes two bounds: {low, high}", at: boundsTok) }
            return .between(key, bounds[0], bounds[1])
        case .keyword("IN"):
            next()
            try noOptions()
            let rightTok = peek
            let right = try side()
            switch (left, right) {
            case (.key(let key), .value(.list(let values))): return .isIn(key, values)
            case (.value(let v), .key(let key)): return .contains(key, v)
            default: throw error("IN needs a field and a list ({a, b} or %@), or a value and a list field", at: rightTok)
            }
        case .keyword("BEGINSWITH"):
            next()
            try noOptions()
            guard case .key(let key) = left else { throw error("BEGINSWITH needs a field on its left", at: opTok) }
            let prefixTok = peek
            guard case .value(.string(let prefix)) = try side() else { throw error("BEGINSWITH takes a string", at: prefixTok) }
            return .beginsWith(key, prefix)
        case .keyword("CONTAINS"):
            next()
            try noOptions()
            guard case .key(let key) = left else { throw error("CONTAINS needs a list field on its left (or self, for words)", at: opTok) }
            guard case .value(let v) = try side() else { throw error("CONTAINS takes a value", at: opTok) }
            return .contains(key, v)
        case .keyword(let k) where ["LIKE", "MATCHES", "ENDSWITH"].contains(k):
            throw unsupported(k, at: opTok, k == "ENDSWITH" ? "only BEGINSWITH is" : "use BEGINSWITH, ==, or token search (self CONTAINS 'word')")
        default:
            break
        }
        guard let op = try comparisonOperator() else {
            throw error("expected an operator (==, !=, <, <=, >, >=, BETWEEN, IN, BEGINSWITH, CONTAINS), found \(describe(opTok.token))", at: opTok)
        }
        let rightTok = peek
        let right = try side()
        switch (left, right) {
        case (.key(let key), .value(let v)): return .compare(key, op, v)
        case (.value(let v), .key(let key)): return .compare(key, op.flipped, v)
        case (.key, .key): throw unsupported("comparing two fields", at: rightTok, "compare a field with a constant")
        case (.value, .value): throw error("a comparison needs a field on one side", at: t)
        }
    }

    private mutating func comparisonOperator() throws(SyntaxError) -> ComparisonOperator? {
        let op: ComparisonOperator
        switch peek.token {
        case .symbol("=="), .symbol("="): op = .equal
        case .symbol("!="), .symbol("<>"): op = .notEqual
        case .symbol("<"): op = .less
        case .symbol("<="), .symbol("=<"): op = .lessOrEqual
        case .symbol(">"): op = .greater
        case .symbol(">="), .symbol("=>"): op = .greaterOrEqual
        default: return nil
        }
        next()
        try noOptions()
        return op
    }

    /// Fails on `[c]`, `[d]`, `[cd]` after an operator.
    private mutating func noOptions() throws(SyntaxError) {
        if peek.token == .symbol("[") {
            throw unsupported("the comparison options [c], [d] (case and diacritic insensitivity)", at: peek, "compare exactly, or use token search (self CONTAINS 'word')")
        }
    }

    private mutating func tokenText() throws(SyntaxError) -> String {
        let t = peek
        guard case .value(.string(let s)) = try side() else { throw error("token search takes a string", at: t) }
        guard !s.split(whereSeparator: { $0.isWhitespace }).isEmpty else { throw error("token search needs at least one word", at: t) }
        return s
    }

    // MARK: Sides and values

    private mutating func side() throws(SyntaxError) -> Side {
        let t = next()
        let result: Side
        switch t.token {
        case .identifier("now") where peek.token == .symbol("("):
            // `now()`, the moment the predicate is read, as Apple's table of CloudKit's functions has it.
            next()
            try expect(")", "after now(")
            result = .value(.date(Date()))
        case .identifier(let name):
            result = .key(name)
        case .format("%K"):
            guard nextArgument < arguments.count else { throw error("%K has no argument", at: t) }
            guard case .string(let key) = arguments[nextArgument] else { throw error("the argument of %K must be a key name (a string)", at: t) }
            guard Names.isIdentifier(key) else { throw error("the argument of %K, \"\(key)\", is not a field name (a letter, then letters, digits or _)", at: t) }
            nextArgument += 1
            result = .key(key)
        case .format(let f) where f == "%@" || Self.numberConversions.contains(f.last!):
            // `%d`, `%ld`, `%f` and the like take their value as `%@` does.
            guard nextArgument < arguments.count else { throw error("\(f) has no argument", at: t) }
            result = .value(arguments[nextArgument])
            nextArgument += 1
        case .format(let f):
            throw unsupported("the format \(f)", at: t, "use %@ for values and %K for keys")
        case .string(let s): result = .value(.string(s))
        case .int(let i): result = .value(.int(i))
        case .double(let d): result = .value(.double(d))
        case .symbol("-"):
            switch next().token {
            case .int(let i): result = .value(.int(-i))
            case .double(let d): result = .value(.double(-d))
            default: throw error("'-' must be followed by a number", at: t)
            }
        case .keyword("YES"), .keyword("TRUE"): result = .value(.int(1))
        case .keyword("NO"), .keyword("FALSE"): result = .value(.int(0))
        case .keyword("NULL"), .keyword("NIL"):
            throw unsupported("nil", at: t, "a record without the field matches no comparison on it")
        case .keyword("SELF"):
            throw unsupported("SELF here", at: t, "only `self CONTAINS 'text'` is")
        case .symbol("{"):
            var items: [PredicateValue] = []
            if peek.token != .symbol("}") {
                while true {
                    let itemTok = peek
                    guard case .value(let v) = try side() else { throw error("a list holds constants, not fields", at: itemTok) }
                    items.append(v)
                    if peek.token == .symbol(",") { next(); continue }
                    break
                }
            }
            try expect("}", "to close the list")
            result = .value(.list(items))
        case .keyword("CAST"):
            try expect("(", "after CAST")
            let n = next()
            var seconds: Double
            switch n.token {
            case .int(let i): seconds = Double(i)
            case .double(let d): seconds = d
            case .symbol("-"):
                switch next().token {
                case .int(let i): seconds = -Double(i)
                case .double(let d): seconds = -d
                default: throw error("CAST takes a number of seconds since 2001", at: n)
                }
            default: throw error("CAST takes a number of seconds since 2001", at: n)
            }
            try expect(",", "in CAST")
            let typeTok = next()
            guard typeTok.token == .string("NSDate") else { throw unsupported("CAST to anything but \"NSDate\"", at: typeTok) }
            try expect(")", "to close CAST")
            let date = Date(timeIntervalSinceReferenceDate: seconds)
            guard date.isStorable else {
                throw error("CAST(…, \"NSDate\") is outside the years 1 to 9999", at: n)
            }
            result = .value(.date(date))
        case .keyword("LOCATION"):
            try expect("(", "after LOCATION")
            let lat = try number("a latitude")
            try expect(",", "between latitude and longitude")
            let lon = try number("a longitude")
            try expect(")", "to close LOCATION")
            guard (-90...90).contains(lat), (-180...180).contains(lon) else { throw error("LOCATION(\(lat), \(lon)) is not on Earth", at: t) }
            result = .value(.location(Location(latitude: lat, longitude: lon)))
        case .keyword("REFERENCE"):
            try expect("(", "after REFERENCE")
            guard case .string(let name) = next().token else { throw error("REFERENCE takes a record name in quotes", at: t) }
            try expect(")", "to close REFERENCE")
            result = .value(.reference(name))
        case .variable(let v):
            throw unsupported("the variable $\(v)", at: t, "pass the value with %@")
        case .keyword(let k):
            throw error("\(k) is a reserved word; write #\(k.lowercased()) for a field of that name", at: t)
        case .end:
            throw error("the predicate ends where a field or a value was expected", at: t)
        default:
            throw error("expected a field or a value, found \(describe(t.token))", at: t)
        }
        // What may not follow a field or value.
        switch peek.token {
        case .symbol("."):
            throw unsupported("a key path (a.b)", at: peek, "name a field of the record itself")
        case .symbol("@"):
            throw unsupported("a collection operator (@count, @sum …)", at: peek)
        case .symbol("+"), .symbol("-"), .symbol("*"), .symbol("/"):
            throw unsupported("arithmetic", at: peek, "compute the value before the query")
        case .symbol("["):
            if case .key = result { throw unsupported("indexing ([…])", at: peek) }
        default:
            break
        }
        return result
    }

    private mutating func number(_ what: String) throws(SyntaxError) -> Double {
        var negative = false
        if peek.token == .symbol("-") { negative = true; next() }
        let t = next()
        switch t.token {
        case .int(let i): return negative ? -Double(i) : Double(i)
        case .double(let d): return negative ? -d : d
        default: throw error("expected \(what), found \(describe(t.token))", at: t)
        }
    }
}
