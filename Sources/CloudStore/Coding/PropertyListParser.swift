import Foundation

/// A strict, bounded parser of XML property lists, written for ckfs instead of Foundation's
/// `PropertyListSerialization`.
///
/// Why our own: the mount daemon parses whatever a user writes into `keyvalue/*.plist`, and
/// Foundation's parser leaks memory on every failed parse on Linux. This one
/// holds nothing beyond the call, reports where text is wrong (line and column) and what was
/// expected, and bounds nesting. It reads what Apple's tools and Python's `plistlib` write:
/// the XML declaration, a DOCTYPE, comments, CDATA, the five named entities and character
/// references, `<plist>` around the value or not. It refuses a DOCTYPE with an internal
/// subset (entity definitions), other encodings than UTF-8, and binary property lists.
package struct PropertyListParser {
    /// What was wrong and where (1-based line and column); the same shape JSON errors have.
    public typealias SyntaxError = JSONParser.SyntaxError

    private let bytes: [UInt8]
    private var index = 0
    private var depth = 0

    private init(_ bytes: [UInt8]) { self.bytes = bytes }

    public static func parse(_ text: String) throws(SyntaxError) -> PropertyListValue {
        try parse(Array(text.utf8))
    }

    public static func parse(_ input: some Collection<UInt8>) throws(SyntaxError) -> PropertyListValue {
        var p = PropertyListParser(Array(input))
        if p.bytes.starts(with: Array("bplist".utf8)) {
            throw p.error("this is a binary property list; write it as XML (Python: plistlib.dumps(value, fmt=plistlib.FMT_XML); macOS: plutil -convert xml1)")
        }
        if p.bytes.starts(with: [0xEF, 0xBB, 0xBF]) { p.index = 3 }
        if let bad = firstInvalidUTF8(p.bytes) { throw p.error("the text is not valid UTF-8 (byte 0x\(String(p.bytes[bad], radix: 16)))", at: bad) }
        try p.skipProlog()
        guard p.index < p.bytes.count else { throw p.error("no property list: the text holds no element") }
        let root = try p.startTag()
        let value: PropertyListValue
        if root.name == "plist" {
            if root.selfClosing { throw p.error("the <plist> element is empty; it must hold one value", at: root.at) }
            try p.skipSpaceAndComments()
            guard p.index < p.bytes.count, !p.looking(at: "</") else { throw p.error("the <plist> element is empty; it must hold one value") }
            value = try p.value(p.startTag())
            try p.skipSpaceAndComments()
            try p.endTag("plist")
        } else {
            value = try p.value(root)
        }
        try p.skipMisc()
        if p.index < p.bytes.count { throw p.error("text after the end of the property list") }
        return value
    }

    // MARK: Errors

    private func error(_ message: String, at position: Int? = nil) -> SyntaxError {
        .at(position ?? index, in: bytes, message)
    }

    /// The offset of the first byte that is not part of a valid UTF-8 sequence.
    static func firstInvalidUTF8(_ bytes: [UInt8]) -> Int? {
        var i = 0
        while i < bytes.count {
            let b = bytes[i]
            if b < 0x80 { i += 1; continue }
            let count: Int, minimum: UInt32
            var scalar: UInt32
            switch b {
            case 0xC0...0xDF: (count, minimum, scalar) = (1, 0x80, UInt32(b & 0x1F))
            case 0xE0...0xEF: (count, minimum, scalar) = (2, 0x800, UInt32(b & 0x0F))
            case 0xF0...0xF7: (count, minimum, scalar) = (3, 0x10000, UInt32(b & 0x07))
            default: return i
            }
            for j in 1...count {
                guard i + j < bytes.count, bytes[i + j] & 0xC0 == 0x80 else { return i }
                scalar = scalar << 6 | UInt32(bytes[i + j] & 0x3F)
            }
            if scalar < minimum || scalar > 0x10FFFF || (0xD800...0xDFFF).contains(scalar) { return i }
            i += count + 1
        }
        return nil
    }

    // MARK: Markup

    private func looking(at s: StaticString) -> Bool {
        let n = s.utf8CodeUnitCount
        guard index + n <= bytes.count else { return false }
        let p = s.utf8Start
        for k in 0..<n where bytes[index + k] != p[k] { return false }
        return true
    }

    private mutating func skipSpace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x09, 0x0A, 0x0D: index += 1
            default: return
            }
        }
    }

    /// Moves past `terminator`, or fails with `unclosed` when it never comes.
    private mutating func skip(past terminator: StaticString, unclosed: String) throws(SyntaxError) {
        let start = index
        while index < bytes.count {
            if looking(at: terminator) { index += terminator.utf8CodeUnitCount; return }
            index += 1
        }
        throw error(unclosed, at: start)
    }

    private mutating func skipSpaceAndComments() throws(SyntaxError) {
        while true {
            skipSpace()
            guard looking(at: "<!--") else { return }
            try skip(past: "-->", unclosed: "a comment is never closed with -->")
        }
    }

    /// Whitespace, comments and processing instructions (outside the root element).
    private mutating func skipMisc() throws(SyntaxError) {
        while true {
            try skipSpaceAndComments()
            guard looking(at: "<?") else { return }
            try skip(past: "?>", unclosed: "a processing instruction is never closed with ?>")
        }
    }

    private mutating func skipProlog() throws(SyntaxError) {
        try skipSpaceAndComments()
        if looking(at: "<?xml") {
            let start = index
            try skip(past: "?>", unclosed: "the XML declaration is never closed with ?>")
            let declaration = String(decoding: bytes[start..<index], as: UTF8.self)
            if let encoding = Self.attribute("encoding", in: declaration)?.lowercased(), !["utf-8", "utf8", "us-ascii", "ascii"].contains(encoding) {
                throw error("the text declares encoding \(encoding); only UTF-8 is read", at: start)
            }
        }
        while true {
            try skipMisc()
            guard looking(at: "<!DOCTYPE") else { return }
            let start = index
            var quote: UInt8?
            while index < bytes.count {
                let b = bytes[index]
                index += 1
                if let q = quote { if b == q { quote = nil }; continue }
                if b == UInt8(ascii: "\"") || b == UInt8(ascii: "'") { quote = b; continue }
                if b == UInt8(ascii: "[") { throw error("a DOCTYPE with an internal subset ([…]) is not accepted in a property list", at: index - 1) }
                if b == UInt8(ascii: ">") { break }
                if index == bytes.count { throw error("the DOCTYPE is never closed with >", at: start) }
            }
        }
    }

    private static func attribute(_ name: String, in text: String) -> String? {
        guard let r = text.range(of: name) else { return nil }
        let rest = text[r.upperBound...].drop { $0 == " " || $0 == "=" }
        guard let q = rest.first, q == "\"" || q == "'" else { return nil }
        return String(rest.dropFirst().prefix { $0 != q })
    }

    private struct Tag {
        var name: String
        var selfClosing: Bool
        var at: Int
    }

    private static func isNameByte(_ b: UInt8) -> Bool {
        (b >= 0x61 && b <= 0x7A) || (b >= 0x41 && b <= 0x5A) || (b >= 0x30 && b <= 0x39)
            || b == UInt8(ascii: "_") || b == UInt8(ascii: ":") || b == UInt8(ascii: "-") || b == UInt8(ascii: ".") || b >= 0x80
    }

    /// A start tag at the current position (`<name attr="v">` or `<name/>`).
    private mutating func startTag() throws(SyntaxError) -> Tag {
        let at = index
        guard index < bytes.count, bytes[index] == UInt8(ascii: "<") else {
            throw error("text outside any element; a property list holds elements only (<string>…</string>)")
        }
        if looking(at: "</") { throw error("an end tag where an element was expected") }
        index += 1
        let nameStart = index
        while index < bytes.count, Self.isNameByte(bytes[index]) { index += 1 }
        guard index > nameStart else { throw error("'<' must start an element name; write &lt; for a literal '<'", at: at) }
        let name = String(decoding: bytes[nameStart..<index], as: UTF8.self)
        while true {
            skipSpace()
            guard index < bytes.count else { throw error("the tag <\(name)> is never closed with >", at: at) }
            if looking(at: "/>") { index += 2; return Tag(name: name, selfClosing: true, at: at) }
            if bytes[index] == UInt8(ascii: ">") { index += 1; return Tag(name: name, selfClosing: false, at: at) }
            let attrStart = index
            while index < bytes.count, Self.isNameByte(bytes[index]) { index += 1 }
            guard index > attrStart else { throw error("unexpected character in the tag <\(name)>") }
            skipSpace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: "=") else { throw error("an attribute of <\(name)> has no value") }
            index += 1
            skipSpace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") || bytes[index] == UInt8(ascii: "'") else {
                throw error("an attribute value of <\(name)> must be in quotes")
            }
            let quote = bytes[index]
            index += 1
            while index < bytes.count, bytes[index] != quote {
                if bytes[index] == UInt8(ascii: "<") { throw error("'<' inside an attribute value") }
                index += 1
            }
            guard index < bytes.count else { throw error("an attribute value of <\(name)> is never closed", at: attrStart) }
            index += 1
        }
    }

    private mutating func endTag(_ name: String) throws(SyntaxError) {
        let at = index
        guard looking(at: "</") else {
            throw error(index < bytes.count ? "expected </\(name)>" : "the text ends before </\(name)>")
        }
        index += 2
        let nameStart = index
        while index < bytes.count, Self.isNameByte(bytes[index]) { index += 1 }
        let found = String(decoding: bytes[nameStart..<index], as: UTF8.self)
        skipSpace()
        guard found == name, index < bytes.count, bytes[index] == UInt8(ascii: ">") else {
            throw error("expected </\(name)>, found </\(found)\(index < bytes.count && bytes[index] == UInt8(ascii: ">") ? ">" : "…")", at: at)
        }
        index += 1
    }

    // MARK: Values

    private mutating func enter(_ tag: Tag) throws(SyntaxError) {
        depth += 1
        if depth > PropertyListValue.maxDepth { throw error("arrays and dictionaries nest deeper than \(PropertyListValue.maxDepth) levels", at: tag.at) }
    }

    private mutating func value(_ tag: Tag) throws(SyntaxError) -> PropertyListValue {
        switch tag.name {
        case "dict":
            try enter(tag)
            defer { depth -= 1 }
            var members: [String: PropertyListValue] = [:]
            if tag.selfClosing { return .dictionary(members) }
            while true {
                try skipSpaceAndComments()
                if looking(at: "</") { try endTag("dict"); return .dictionary(members) }
                guard index < bytes.count else { throw error("the text ends before </dict>") }
                let keyTag = try startTag()
                guard keyTag.name == "key" else {
                    throw error("expected <key> in a dict, found <\(keyTag.name)>; a dict holds <key> and value pairs", at: keyTag.at)
                }
                let key = keyTag.selfClosing ? "" : try text(of: "key")
                try skipSpaceAndComments()
                guard index < bytes.count, !looking(at: "</") else { throw error("the key \"\(key)\" has no value after it") }
                let member = try value(try startTag())
                if members.updateValue(member, forKey: key) != nil {
                    throw error("the key \"\(key)\" appears twice in one dict", at: keyTag.at)
                }
            }
        case "array":
            try enter(tag)
            defer { depth -= 1 }
            var items: [PropertyListValue] = []
            if tag.selfClosing { return .array(items) }
            while true {
                try skipSpaceAndComments()
                if looking(at: "</") { try endTag("array"); return .array(items) }
                guard index < bytes.count else { throw error("the text ends before </array>") }
                items.append(try value(try startTag()))
            }
        case "string":
            return .string(tag.selfClosing ? "" : try text(of: "string"))
        case "true", "false":
            if !tag.selfClosing {
                skipSpace()
                try endTag(tag.name)
            }
            return .bool(tag.name == "true")
        case "integer":
            let t = try trimmedText(tag)
            guard let v = Self.integer(t) else { throw error("<integer> holds \"\(t.prefix(40))\", not a 64-bit signed integer", at: tag.at) }
            return .integer(v)
        case "real":
            let t = try trimmedText(tag)
            guard let v = Self.real(t) else { throw error("<real> holds \"\(t.prefix(40))\", not a number", at: tag.at) }
            return .real(v)
        case "date":
            let t = try trimmedText(tag)
            guard let v = Self.date(t) else { throw error("<date> holds \"\(t.prefix(40))\"; a date is written YYYY-MM-DDTHH:MM:SSZ (UTC)", at: tag.at) }
            return .date(v)
        case "data":
            let t = try trimmedText(tag)
            guard let v = Self.base64(t) else { throw error("<data> holds text that is not base64", at: tag.at) }
            return .data(v)
        case "key":
            throw error("<key> outside a dict", at: tag.at)
        case "plist":
            throw error("<plist> inside a value; it may only be the outermost element", at: tag.at)
        default:
            throw error("unknown element <\(tag.name)>; a property list holds dict, array, string, integer, real, true, false, date and data", at: tag.at)
        }
    }

    private mutating func trimmedText(_ tag: Tag) throws(SyntaxError) -> String {
        tag.selfClosing ? "" : String(try text(of: tag.name).trimmingXMLSpace())
    }

    /// Character data up to `</name>`: entities and character references decoded, CDATA
    /// taken as is, comments dropped, line ends normalized as XML does.
    private mutating func text(of name: String) throws(SyntaxError) -> String {
        var out: [UInt8] = []
        while true {
            guard index < bytes.count else { throw error("the text ends before </\(name)>") }
            let b = bytes[index]
            if b == UInt8(ascii: "<") {
                if looking(at: "</") { break }
                if looking(at: "<!--") { try skip(past: "-->", unclosed: "a comment is never closed with -->"); continue }
                if looking(at: "<![CDATA[") {
                    index += 9
                    let start = index
                    try skip(past: "]]>", unclosed: "a CDATA section is never closed with ]]>")
                    out += bytes[start..<(index - 3)]
                    continue
                }
                throw error("an element inside <\(name)>, which holds text only; write &lt; for a literal '<'")
            } else if b == UInt8(ascii: "&") {
                try entity(into: &out)
            } else if b == 0x0D {
                out.append(0x0A)
                index += 1
                if index < bytes.count, bytes[index] == 0x0A { index += 1 }
            } else if b < 0x20 && b != 0x09 && b != 0x0A {
                throw error("the control character 0x\(String(b, radix: 16)) cannot appear in XML text; store such bytes as <data>")
            } else {
                out.append(b)
                index += 1
            }
        }
        try endTag(name)
        return String(decoding: out, as: UTF8.self)
    }

    private mutating func entity(into out: inout [UInt8]) throws(SyntaxError) {
        let at = index
        index += 1
        let start = index
        while index < bytes.count, bytes[index] != UInt8(ascii: ";"), index - start < 12 { index += 1 }
        guard index < bytes.count, bytes[index] == UInt8(ascii: ";") else { throw error("'&' must start an entity such as &amp;", at: at) }
        let name = String(decoding: bytes[start..<index], as: UTF8.self)
        index += 1
        switch name {
        case "amp": out.append(UInt8(ascii: "&"))
        case "lt": out.append(UInt8(ascii: "<"))
        case "gt": out.append(UInt8(ascii: ">"))
        case "quot": out.append(UInt8(ascii: "\""))
        case "apos": out.append(UInt8(ascii: "'"))
        default:
            var code: UInt32?
            if name.hasPrefix("#x") || name.hasPrefix("#X") { code = UInt32(name.dropFirst(2), radix: 16) } else if name.hasPrefix("#") { code = UInt32(name.dropFirst(), radix: 10) }
            guard let c = code else { throw error("unknown entity &\(name);", at: at) }
            let allowed = c == 0x9 || c == 0xA || c == 0xD || (0x20...0xD7FF).contains(c) || (0xE000...0xFFFD).contains(c) || (0x10000...0x10FFFF).contains(c)
            guard allowed, let scalar = Unicode.Scalar(c) else { throw error("&\(name); is not a character XML can carry", at: at) }
            out += Array(String(Character(scalar)).utf8)
        }
    }

    // MARK: Scalars

    static func integer(_ t: String) -> Int64? {
        var s = t[...]
        var negative = false
        if s.first == "-" || s.first == "+" { negative = s.first == "-"; s = s.dropFirst() }
        var radix = 10
        if s.hasPrefix("0x") || s.hasPrefix("0X") { radix = 16; s = s.dropFirst(2) }
        guard !s.isEmpty, s.allSatisfy({ $0.isASCII && $0.isHexDigit }) else { return nil }
        guard let magnitude = UInt64(s, radix: radix) else { return nil }
        if negative { return magnitude <= UInt64(Int64.max) + 1 ? Int64(truncatingIfNeeded: 0 &- magnitude) : nil }
        return magnitude <= UInt64(Int64.max) ? Int64(magnitude) : nil
    }

    static func real(_ t: String) -> Double? {
        switch t.lowercased() {
        case "nan", "+nan", "-nan": return .nan
        case "inf", "+inf", "infinity", "+infinity": return .infinity
        case "-inf", "-infinity": return -.infinity
        default:
            guard !t.isEmpty, t.allSatisfy({ $0.isASCII && ($0.isNumber || "+-.eE".contains($0)) }) else { return nil }
            return Double(t)
        }
    }

    /// `YYYY-MM-DDTHH:MM:SSZ`, years 1–9999.
    static func date(_ t: String) -> Date? {
        let c = Array(t.utf8)
        guard c.count == 20, c[4] == UInt8(ascii: "-"), c[7] == UInt8(ascii: "-"), c[10] == UInt8(ascii: "T"),
              c[13] == UInt8(ascii: ":"), c[16] == UInt8(ascii: ":"), c[19] == UInt8(ascii: "Z") else { return nil }
        func number(_ r: Range<Int>) -> Int? {
            var v = 0
            for i in r {
                guard c[i] >= 0x30 && c[i] <= 0x39 else { return nil }
                v = v * 10 + Int(c[i] - 0x30)
            }
            return v
        }
        guard let y = number(0..<4), let mo = number(5..<7), let d = number(8..<10), let h = number(11..<13),
              let mi = number(14..<16), let s = number(17..<19) else { return nil }
        let leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0
        let monthDays = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
        guard y >= 1, (1...12).contains(mo), d >= 1, d <= monthDays[mo - 1], h < 24, mi < 60, s < 60 else { return nil }
        // Days from 1970-01-01 to the civil date (H. Hinnant's algorithm).
        let yy = mo <= 2 ? y - 1 : y
        let era = (yy >= 0 ? yy : yy - 399) / 400
        let yoe = yy - era * 400
        let doy = (153 * (mo + (mo > 2 ? -3 : 9)) + 2) / 5 + d - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        let days = era * 146097 + doe - 719468
        return Date(timeIntervalSince1970: Double(days * 86400 + h * 3600 + mi * 60 + s))
    }

    /// Base64 with whitespace anywhere, padding optional at the end.
    static func base64(_ t: String) -> [UInt8]? {
        var out: [UInt8] = []
        out.reserveCapacity(t.utf8.count * 3 / 4)
        var acc: UInt32 = 0
        var bits = 0
        var padding = 0
        for b in t.utf8 {
            let v: UInt32
            switch b {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"): v = UInt32(b - UInt8(ascii: "A"))
            case UInt8(ascii: "a")...UInt8(ascii: "z"): v = UInt32(b - UInt8(ascii: "a")) + 26
            case UInt8(ascii: "0")...UInt8(ascii: "9"): v = UInt32(b - UInt8(ascii: "0")) + 52
            case UInt8(ascii: "+"): v = 62
            case UInt8(ascii: "/"): v = 63
            case UInt8(ascii: "="): padding += 1; continue
            case 0x20, 0x09, 0x0A, 0x0D: continue
            default: return nil
            }
            guard padding == 0 else { return nil }
            acc = acc << 6 | v
            bits += 6
            if bits >= 8 {
                bits -= 8
                out.append(UInt8(truncatingIfNeeded: acc >> UInt32(bits)))
            }
        }
        // Leftover bits must be zero padding of a whole group.
        guard bits < 6, acc & ((1 << UInt32(bits)) - 1) == 0, padding <= 2 else { return nil }
        return out
    }
}

extension StringProtocol {
    /// Without XML whitespace (space, tab, newline, return) at either end.
    func trimmingXMLSpace() -> SubSequence {
        let space: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\n" || $0 == "\r" || $0 == "\r\n" }
        var s = self[...]
        while let f = s.first, space(f) { s = s.dropFirst() }
        while let l = s.last, space(l) { s = s.dropLast() }
        return s
    }
}
