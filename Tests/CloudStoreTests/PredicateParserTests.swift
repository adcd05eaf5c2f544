import Foundation
import Testing
import TestSupport
@testable import CloudStore

/// The NSPredicate format parser: round trips, substitution, named errors, garbage.
@Suite struct PredicateParserTests {
    typealias G = PropertyListCodingTests.Generator

    static func randomValue(_ g: inout G, depth: Int = 0) -> PredicateValue {
        switch Int.random(in: 0..<(depth > 0 ? 6 : 7), using: &g) {
        case 0: return .string(["", "a", "Mei \"Chen\"", "line\nbreak", "back\\slash", "日本", "AND", "%@"].randomElement(using: &g)!)
        case 1: return .int(Int64.random(in: -1_000_000...1_000_000, using: &g))
        case 2: return .double([0.5, -2.25, 1e300, 3.0, -0.0, 123456.789].randomElement(using: &g)!)
        case 3: return .date(milliseconds: Int64.random(in: -10_000_000_000_000...10_000_000_000_000, using: &g))
        case 4: return .location(Location(latitude: Double(Int.random(in: -90...90, using: &g)) / 2, longitude: Double(Int.random(in: -180...180, using: &g))))
        case 5: return .reference(["a", "rec-1", "x y"].randomElement(using: &g)!)
        default: return .list((0..<Int.random(in: 0...3, using: &g)).map { _ in randomValue(&g, depth: 1) })
        }
    }

    static func randomPredicate(_ g: inout G, depth: Int = 0) -> QueryPredicate {
        let keys = ["title", "n", "when", "tags", "recordID", "creationDate", "place", "in", "between"]
        let key = keys.randomElement(using: &g)!
        switch Int.random(in: 0..<(depth > 2 ? 8 : 10), using: &g) {
        case 0: return .all
        case 1: return .compare(key, ComparisonOperator.allCases.randomElement(using: &g)!, randomValue(&g, depth: 1))
        case 2: return .between(key, randomValue(&g, depth: 1), randomValue(&g, depth: 1))
        case 3: return .isIn(key, (0..<Int.random(in: 0...3, using: &g)).map { _ in randomValue(&g, depth: 1) })
        case 4: return .beginsWith(key, ["", "pre", "a\"b"].randomElement(using: &g)!)
        case 5: return .contains(key, randomValue(&g, depth: 1))
        case 6: return .tokens(["word", "two words", "Ünïcode"].randomElement(using: &g)!)
        case 7: return .distance(key, Location(latitude: 59.5, longitude: 24.75), [.less, .lessOrEqual, .greater, .greaterOrEqual].randomElement(using: &g)!, 1500.5)
        case 8: return .not(randomPredicate(&g, depth: depth + 1))
        default: return .and((0..<Int.random(in: 2...3, using: &g)).map { _ in randomPredicate(&g, depth: depth + 1) })
        }
    }

    @Test func printedPredicatesParseBackEqual() throws {
        var g = G(state: 99)
        for _ in 0..<5_000 {
            let p = Self.randomPredicate(&g)
            let text = p.description
            let parsed = try PredicateParser.parse(text)
            #expect(parsed == p, "\(text)")
        }
    }

    @Test func readsNSPredicateSpellings() throws {
        #expect(try PredicateParser.parse("title = 'x'") == .compare("title", .equal, .string("x")))
        #expect(try PredicateParser.parse("title <> \"x\"") == .compare("title", .notEqual, .string("x")))
        #expect(try PredicateParser.parse("5 < n") == .compare("n", .greater, .int(5)))
        #expect(try PredicateParser.parse("n => 5 && n =< 9") == .and([.compare("n", .greaterOrEqual, .int(5)), .compare("n", .lessOrEqual, .int(9))]))
        #expect(try PredicateParser.parse("NOT (done == YES)") == .not(.compare("done", .equal, .int(1))))
        #expect(try PredicateParser.parse("!done == NO") == .not(.compare("done", .equal, .int(0))))
        #expect(try PredicateParser.parse("'ink' IN tags") == .contains("tags", .string("ink")))
        #expect(try PredicateParser.parse("self contains 'Lighthouse'") == .tokens("Lighthouse"))
        #expect(try PredicateParser.parse("allTokens TOKENMATCHES[cdl] 'old tower'") == .tokens("old tower"))
        #expect(try PredicateParser.parse("#in == 1") == .compare("in", .equal, .int(1)))
        #expect(try PredicateParser.parse("n == 0x1F") == .compare("n", .equal, .int(31)))
        #expect(try PredicateParser.parse("when > CAST(0, \"NSDate\")") == .compare("when", .greater, .date(milliseconds: 978_307_200_000)))
        #expect(try PredicateParser.parse("distanceToLocation:fromLocation:(where, LOCATION(59.4, 24.7)) < 5000")
                == .distance("where", Location(latitude: 59.4, longitude: 24.7), .less, 5000))
        #expect(try PredicateParser.parse("TRUEPREDICATE") == .all)
        // `now()`, in Apple's table of CloudKit's functions: the moment it is read. A field named
        // now is still a field.
        let before = Date()
        guard case .compare("due", .less, .date(let when)) = try PredicateParser.parse("due < now()") else {
            Issue.record("now() is no date")
            return
        }
        #expect(when >= before.addingTimeInterval(-0.001) && when <= Date().addingTimeInterval(0.001))
        #expect(try PredicateParser.parse("now == 1") == .compare("now", .equal, .int(1)))
    }

    @Test func substitutesArgumentsAndKeys() throws {
        let p = try PredicateParser.parse("%K == %@ AND when < %@ AND owner == %@ AND distanceToLocation:fromLocation:(where, %@) < 10",
                                          arguments: [.string("title"), .string("x"), .date(Date(timeIntervalSince1970: 5)), .reference("r1"),
                                                      .location(Location(latitude: 1, longitude: 2))])
        #expect(p == .and([.compare("title", .equal, .string("x")), .compare("when", .less, .date(milliseconds: 5000)), .compare("owner", .equal, .reference("r1")),
                           .distance("where", Location(latitude: 1, longitude: 2), .less, 10)]))
        #expect(try PredicateParser.parse("n IN %@", arguments: [.list([.int(1), .int(2)])]) == .isIn("n", [.int(1), .int(2)]))
        #expect(throws: PredicateParser.SyntaxError.self) { try PredicateParser.parse("n == %@") }
        #expect(throws: PredicateParser.SyntaxError.self) { try PredicateParser.parse("n == 1", arguments: [.int(2)]) }
        #expect(throws: PredicateParser.SyntaxError.self) { try PredicateParser.parse("%K == 1", arguments: [.int(2)]) }
    }

    @Test func unsupportedConstructsAreNamedWithTheirPosition() {
        let cases: [(String, String, Int)] = [
            ("a == 1 OR b == 2", "OR is not supported", 8),
            ("a == 1 || b == 2", "OR is not supported", 8),
            ("name LIKE 'M*'", "LIKE is not supported", 6),
            ("name MATCHES '.*'", "MATCHES is not supported", 6),
            ("name ENDSWITH 'x'", "ENDSWITH is not supported", 6),
            ("author.name == 'x'", "key path", 7),
            ("ANY tags == 'x'", "aggregate ANY", 1),
            ("tags.@count > 2", "key path", 5),
            ("name ==[c] 'x'", "comparison options", 8),
            ("name BEGINSWITH[cd] 'x'", "comparison options", 16),
            ("n + 1 > 2", "arithmetic", 3),
            ("name == nil", "nil is not supported", 9),
            ("name == $NAME", "variable $NAME", 9),
            ("FALSEPREDICATE", "FALSEPREDICATE is not supported", 1),
            ("SUBQUERY(x, $y, $y == 1).@count > 0", "SUBQUERY is not supported", 1),
            ("FUNCTION(x, 'y') == 1", "FUNCTION is not supported", 1),
            ("a == b", "comparing two fields", 6),
            ("when > CAST('x', 'NSString')", "CAST takes a number", 13),
            ("distanceToLocation:fromLocation:(where, 'x') < 3", "takes a location second", 41),
            ("n == 'unclosed", "never closed", 6),
            ("(n == 1", "expected ')'", 8),
            ("n == 1 n == 2", "after a complete predicate", 8),
            ("", "empty", 1),
            ("n ~ 1", "unexpected character", 3),
            ("SELF == 'x'", "SELF with", 6),
        ]
        for (text, message, position) in cases {
            do {
                let p = try PredicateParser.parse(text)
                Issue.record("parsed \(text.debugDescription) as \(p)")
            } catch {
                #expect(error.message.contains(message), "\(text.debugDescription): \(error)")
                #expect(error.position == position, "\(text.debugDescription): \(error)")
            }
        }
    }

    @Test func garbageNeverCrashesTheParser() {
        var g = G(state: 1234)
        let pieces = ["n", "==", "'x'", "(", ")", "{", "}", ",", "AND", "OR", "NOT", "IN", "BETWEEN", "%@", "%K", "CAST", "LOCATION",
                      "REFERENCE", "1", "-", "2.5", "\"", "'", "self", "CONTAINS", "[c]", ".", "@", "$v", "TRUEPREDICATE", " ", "distanceToLocation:fromLocation:", "\\", "é"]
        let seeds = (0..<50).map { _ in Self.randomPredicate(&g).description }
        var parsed = 0
        for i in 0..<100_000 {
            var text: String
            if i % 2 == 0 {
                var chars = Array(seeds[i % seeds.count].unicodeScalars)
                for _ in 0..<Int.random(in: 1...4, using: &g) where !chars.isEmpty {
                    let at = Int.random(in: 0..<chars.count, using: &g)
                    switch Int.random(in: 0..<3, using: &g) {
                    case 0: chars.remove(at: at)
                    case 1: chars.insert(pieces.randomElement(using: &g)!.unicodeScalars.first!, at: at)
                    default: chars.swapAt(at, Int.random(in: 0..<chars.count, using: &g))
                    }
                }
                text = String(String.UnicodeScalarView(chars))
            } else {
                text = (0..<Int.random(in: 0...12, using: &g)).map { _ in pieces.randomElement(using: &g)! }.joined(separator: " ")
            }
            if (try? PredicateParser.parse(text, arguments: [.string("k"), .int(1)])) != nil { parsed += 1 }
        }
        #expect(parsed < 100_000)
    }
}
