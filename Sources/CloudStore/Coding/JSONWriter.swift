/// Writes ``JSONValue``s as canonical text: keys sorted by their UTF-8 bytes, and either
/// pretty (2-space indent, `"key": value`) or compact (no white space).
///
/// The same value always gives the same bytes, so record files diff cleanly and a change tag
/// can stand for the rendered text.
package enum JSONWriter {
    public static func pretty(_ value: JSONValue) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(256)
        write(value, into: &out, indent: 0, pretty: true)
        out.append(0x0A)
        return out
    }

    public static func compact(_ value: JSONValue) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(256)
        write(value, into: &out, indent: 0, pretty: false)
        return out
    }

    public static func prettyString(_ value: JSONValue) -> String { String(decoding: pretty(value), as: UTF8.self) }
    public static func compactString(_ value: JSONValue) -> String { String(decoding: compact(value), as: UTF8.self) }

    private static func newline(_ out: inout [UInt8], _ indent: Int) {
        out.append(0x0A)
        out.append(contentsOf: repeatElement(0x20, count: indent))
    }

    static func write(_ value: JSONValue, into out: inout [UInt8], indent: Int, pretty: Bool) {
        switch value {
        case .null: out.append(contentsOf: "null".utf8)
        case .bool(let b): out.append(contentsOf: (b ? "true" : "false").utf8)
        case .int(let i): out.append(contentsOf: String(i).utf8)
        case .double(let d): out.append(contentsOf: formatDouble(d).utf8)
        case .string(let s): writeString(s, into: &out)
        case .array(let elements):
            if elements.isEmpty { out.append(contentsOf: "[]".utf8); return }
            out.append(UInt8(ascii: "["))
            // Arrays of scalars stay on one line: lists of tags or numbers read better so.
            let inline = !pretty || elements.allSatisfy { if case .array = $0 { false } else if case .object = $0 { false } else { true } }
            for (i, element) in elements.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")); if inline && pretty { out.append(0x20) } }
                if !inline { newline(&out, indent + 2) }
                write(element, into: &out, indent: indent + 2, pretty: pretty)
            }
            if !inline { newline(&out, indent) }
            out.append(UInt8(ascii: "]"))
        case .object(let members):
            if members.isEmpty { out.append(contentsOf: "{}".utf8); return }
            out.append(UInt8(ascii: "{"))
            // Sorting the pairs, not the keys, saves a second hash lookup per member.
            let sorted = members.sorted { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }
            for (i, member) in sorted.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                if pretty { newline(&out, indent + 2) }
                writeString(member.key, into: &out)
                out.append(UInt8(ascii: ":"))
                if pretty { out.append(0x20) }
                write(member.value, into: &out, indent: indent + 2, pretty: pretty)
            }
            if pretty { newline(&out, indent) }
            out.append(UInt8(ascii: "}"))
        }
    }

    /// Shortest text that reads back as the same double, always with a '.' or an exponent so
    /// it never reads back as an integer.
    static func formatDouble(_ d: Double) -> String {
        precondition(d.isFinite, "JSON has no text for \(d)")
        // Swift prints the shortest round-trip text: "0.1", "1e-05" (valid JSON), "5.0".
        var s = d.description
        if !s.contains("."), !s.contains("e") { s += ".0" }
        return s
    }

    private static let hex: [UInt8] = Array("0123456789abcdef".utf8)

    static func writeString(_ s: String, into out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        // Most strings need no escape: copy those in one go.
        var s = s
        let copied = s.withUTF8 { bytes -> Bool in
            guard !bytes.contains(where: { $0 < 0x20 || $0 == 0x22 || $0 == 0x5C }) else { return false }
            out.append(contentsOf: bytes)
            return true
        }
        if copied {
            out.append(UInt8(ascii: "\""))
            return
        }
        for b in s.utf8 {
            switch b {
            case 0x22: out.append(0x5C); out.append(0x22)
            case 0x5C: out.append(0x5C); out.append(0x5C)
            case 0x0A: out.append(0x5C); out.append(UInt8(ascii: "n"))
            case 0x0D: out.append(0x5C); out.append(UInt8(ascii: "r"))
            case 0x09: out.append(0x5C); out.append(UInt8(ascii: "t"))
            case 0..<0x20:
                out.append(contentsOf: "\\u00".utf8)
                out.append(hex[Int(b >> 4)])
                out.append(hex[Int(b & 0xF)])
            default: out.append(b)
            }
        }
        out.append(UInt8(ascii: "\""))
    }
}
