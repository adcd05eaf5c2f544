/// The words and symbols of NSPredicate's format language, each with its offset in the text
/// (in characters, for messages).
struct PredicateLexer {
    enum Token: Equatable {
        case identifier(String)
        /// A reserved word, upper-cased (`AND`, `BETWEEN`, `TRUEPREDICATE` …).
        case keyword(String)
        case string(String)
        case int(Int64)
        case double(Double)
        /// Punctuation and operators: `(`, `)`, `{`, `}`, `,`, `==`, `<=`, `&&`, `[` …
        case symbol(String)
        /// `%@`, `%K`, or another `%` form.
        case format(String)
        case variable(String)
        case end
    }

    struct Located: Equatable {
        var token: Token
        /// 1-based character position.
        var position: Int
    }

    /// NSPredicate's reserved words (case-insensitive); ckfs's literal functions are here too.
    static let reserved: Set<String> = [
        "AND", "OR", "NOT", "IN", "BETWEEN", "BEGINSWITH", "ENDSWITH", "CONTAINS", "LIKE", "MATCHES",
        "TRUEPREDICATE", "FALSEPREDICATE", "ANY", "ALL", "SOME", "NONE", "SUBQUERY", "FUNCTION", "CAST",
        "SELF", "NULL", "NIL", "YES", "NO", "TRUE", "FALSE", "TOKENMATCHES", "FIRST", "LAST", "SIZE",
        "LOCATION", "REFERENCE",
    ]

    /// What was wrong and where.
    struct Failure: Error {
        var message: String
        var position: Int
    }

    static func isDigit(_ c: Unicode.Scalar) -> Bool { c >= "0" && c <= "9" }

    static func tokens(_ text: String) throws(Failure) -> [Located] {
        let chars = Array(text.unicodeScalars)
        var out: [Located] = []
        var i = 0
        func peek(_ k: Int = 0) -> Unicode.Scalar? { i + k < chars.count ? chars[i + k] : nil }
        while i < chars.count {
            let c = chars[i]
            let start = i + 1
            if c.properties.isWhitespace { i += 1; continue }
            if c == "\"" || c == "'" {
                i += 1
                var s = String.UnicodeScalarView()
                var closed = false
                while i < chars.count {
                    let d = chars[i]
                    if d == c { closed = true; i += 1; break }
                    if d == "\\" {
                        guard let e = peek(1) else { break }
                        i += 2
                        switch e {
                        case "n": s.append("\n")
                        case "t": s.append("\t")
                        case "r": s.append("\r")
                        case "0": s.append("\0")
                        case "u":
                            let hex = String(String.UnicodeScalarView(chars[i..<min(i + 4, chars.count)]))
                            guard hex.count == 4, let v = UInt32(hex, radix: 16), let u = Unicode.Scalar(v) else {
                                throw Failure(message: "\\u must be followed by four hex digits", position: i - 1)
                            }
                            s.append(u)
                            i += 4
                        default: s.append(e)
                        }
                        continue
                    }
                    s.append(d)
                    i += 1
                }
                guard closed else { throw Failure(message: "a string is never closed with \(c)", position: start) }
                out.append(Located(token: .string(String(s)), position: start))
                continue
            }
            if isDigit(c) || (c == "." && peek(1).map(isDigit) == true) {
                var text = ""
                func take(while ok: (Unicode.Scalar) -> Bool) {
                    while let d = peek(), ok(d) { text.unicodeScalars.append(d); i += 1 }
                }
                if c == "0", let x = peek(1), x == "x" || x == "X" {
                    i += 2
                    take { $0.properties.isASCIIHexDigit }
                    guard let v = Int64(text, radix: 16) else { throw Failure(message: "\"0x\(text)\" is not a 64-bit number", position: start) }
                    out.append(Located(token: .int(v), position: start))
                    continue
                }
                take { isDigit($0) || $0 == "." }
                if let e = peek(), e == "e" || e == "E" {
                    text.unicodeScalars.append(e)
                    i += 1
                    if let sign = peek(), sign == "+" || sign == "-" { text.unicodeScalars.append(sign); i += 1 }
                    take(while: isDigit)
                }
                if let v = Int64(text) {
                    out.append(Located(token: .int(v), position: start))
                } else if let v = Double(text), v.isFinite {
                    out.append(Located(token: .double(v), position: start))
                } else {
                    throw Failure(message: "\"\(text)\" is not a number", position: start)
                }
                continue
            }
            if c.properties.isAlphabetic || c == "_" || c == "#" || c == "$" {
                var word = String.UnicodeScalarView()
                let escaped = c == "#"
                let variable = c == "$"
                if escaped || variable { i += 1 }
                while let d = peek(), d.properties.isAlphabetic || d.properties.numericType != nil || d == "_" || d == ":" {
                    word.append(d)
                    i += 1
                }
                let w = String(word)
                if w.isEmpty { throw Failure(message: "\(c) must be followed by a name", position: start) }
                if variable { out.append(Located(token: .variable(w), position: start)) }
                else if !escaped && reserved.contains(w.uppercased()) { out.append(Located(token: .keyword(w.uppercased()), position: start)) }
                else { out.append(Located(token: .identifier(w), position: start)) }
                continue
            }
            if c == "%" {
                // `%@`, `%K`, or a C conversion with its length modifiers (`%d`, `%ld`, `%f`).
                var spec = "%"
                var j = 1
                while let m = peek(j), "lhqzL".unicodeScalars.contains(m) {
                    spec.unicodeScalars.append(m)
                    j += 1
                }
                guard let f = peek(j) else { throw Failure(message: "% must be followed by @, K or a conversion such as d", position: start) }
                spec.unicodeScalars.append(f)
                out.append(Located(token: .format(spec), position: start))
                i += j + 1
                continue
            }
            let two = peek(1).map { String(c) + String($0) } ?? ""
            if ["==", "!=", "<>", "<=", ">=", "=<", "=>", "&&", "||"].contains(two) {
                out.append(Located(token: .symbol(two), position: start))
                i += 2
                continue
            }
            if "(){},=<>![].+-*/@".unicodeScalars.contains(c) {
                out.append(Located(token: .symbol(String(c)), position: start))
                i += 1
                continue
            }
            throw Failure(message: "unexpected character '\(c)'", position: start)
        }
        out.append(Located(token: .end, position: chars.count + 1))
        return out
    }
}
