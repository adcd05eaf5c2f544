import Foundation

/// Writes XML property lists as Apple's tools do: the XML declaration and DOCTYPE, one
/// element per line indented with tabs, dictionary keys sorted so files diff well.
///
/// Strings escape `&`, `<`, `>` and a carriage return (`&#13;`, which XML would otherwise read
/// back as a newline); reals are written so they read back to the same bits (`nan`,
/// `+infinity`, `-infinity` for the special values); data is one line of base64.
package enum PropertyListWriter {
    static let header = Array("""
        <?xml version="1.0" encoding="UTF-8"?>
        <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">

        """.utf8)

    /// A whole document holding `value`; `comment` (no `--` in it) goes before `<plist>`.
    public static func document(_ value: PropertyListValue, comment: String? = nil) -> [UInt8] {
        var out = header
        if let comment { out += Array("<!-- \(comment) -->\n".utf8) }
        out += Array("<plist version=\"1.0\">\n".utf8)
        write(value, into: &out, indent: 0)
        out += Array("\n</plist>\n".utf8)
        return out
    }

    /// The value's element with no whitespace between elements: `<string>hi</string>`.
    public static func element(_ value: PropertyListValue) -> [UInt8] {
        var out: [UInt8] = []
        write(value, into: &out, indent: nil)
        return out
    }

    /// The byte count of ``element(_:)``: how the key-value store measures a value.
    public static func compactSize(_ value: PropertyListValue) -> Int { element(value).count }

    private static func write(_ value: PropertyListValue, into out: inout [UInt8], indent: Int?) {
        func start(_ tag: String) { out += Array("<\(tag)>".utf8) }
        func end(_ tag: String) { out += Array("</\(tag)>".utf8) }
        func newline(_ level: Int) {
            guard indent != nil else { return }
            out.append(UInt8(ascii: "\n"))
            out += repeatElement(UInt8(ascii: "\t"), count: level)
        }
        let level = indent ?? 0
        switch value {
        case .string(let s):
            start("string"); escape(s, into: &out); end("string")
        case .integer(let i):
            start("integer"); out += Array(String(i).utf8); end("integer")
        case .real(let d):
            start("real"); out += Array(realText(d).utf8); end("real")
        case .bool(let b):
            out += Array((b ? "<true/>" : "<false/>").utf8)
        case .date(let d):
            start("date"); out += Array((dateText(d) ?? "0001-01-01T00:00:00Z").utf8); end("date")
        case .data(let bytes):
            start("data"); out += Array(Data(bytes).base64EncodedString().utf8); end("data")
        case .array(let items):
            if items.isEmpty { out += Array("<array/>".utf8); return }
            start("array")
            for item in items {
                newline(level + 1)
                write(item, into: &out, indent: indent.map { $0 + 1 })
            }
            newline(level)
            end("array")
        case .dictionary(let members):
            if members.isEmpty { out += Array("<dict/>".utf8); return }
            start("dict")
            for key in members.keys.sorted() {
                newline(level + 1)
                start("key"); escape(key, into: &out); end("key")
                newline(level + 1)
                write(members[key]!, into: &out, indent: indent.map { $0 + 1 })
            }
            newline(level)
            end("dict")
        }
    }

    private static func escape(_ s: String, into out: inout [UInt8]) {
        for b in s.utf8 {
            switch b {
            case UInt8(ascii: "&"): out += Array("&amp;".utf8)
            case UInt8(ascii: "<"): out += Array("&lt;".utf8)
            case UInt8(ascii: ">"): out += Array("&gt;".utf8)
            case 0x0D: out += Array("&#13;".utf8)
            default: out.append(b)
            }
        }
    }

    static func realText(_ d: Double) -> String {
        if d.isNaN { return "nan" }
        if d.isInfinite { return d > 0 ? "+infinity" : "-infinity" }
        return d.description
    }

    /// `YYYY-MM-DDTHH:MM:SSZ` in UTC, whole seconds (rounded toward the past); nil outside
    /// the years 1–9999.
    public static func dateText(_ date: Date) -> String? {
        let seconds = date.timeIntervalSince1970.rounded(.down)
        guard seconds.isFinite, abs(seconds) < 1e15 else { return nil }
        var t = time_t(seconds)
        var parts = tm()
        guard gmtime_r(&t, &parts) != nil else { return nil }
        let year = Int(parts.tm_year) + 1900
        guard (1...9999).contains(year) else { return nil }
        func two(_ v: Int32) -> String { v < 10 ? "0\(v)" : "\(v)" }
        let y = String(year)
        return String(repeating: "0", count: 4 - y.count) + y + "-" + two(parts.tm_mon + 1) + "-" + two(parts.tm_mday)
            + "T" + two(parts.tm_hour) + ":" + two(parts.tm_min) + ":" + two(parts.tm_sec) + "Z"
    }
}
