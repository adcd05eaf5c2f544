import Foundation

/// A property-list value: what the key-value store holds and what its XML files carry.
///
/// Dates have whole seconds, as XML property lists write them (`2026-11-22T09:30:00Z`), so a
/// value reads back the same in every client and in Python's `plistlib`.
public enum PropertyListValue: Sendable, Hashable, CustomStringConvertible {
    case string(String)
    case integer(Int64)
    case real(Double)
    case bool(Bool)
    case date(Date)
    case data([UInt8])
    case array([PropertyListValue])
    case dictionary([String: PropertyListValue])

    /// The type's name as the CLI and messages spell it.
    public var typeName: String {
        switch self {
        case .string: "string"
        case .integer: "integer"
        case .real: "real"
        case .bool: "bool"
        case .date: "date"
        case .data: "data"
        case .array: "array"
        case .dictionary: "dictionary"
        }
    }

    /// Two reals are equal when their bits are: NaN equals NaN and -0.0 is not 0.0, so a value
    /// read back equals the one written and no change is seen where there was none.
    public static func == (a: Self, b: Self) -> Bool {
        switch (a, b) {
        case (.string(let x), .string(let y)): x == y
        case (.integer(let x), .integer(let y)): x == y
        case (.real(let x), .real(let y)): x.bitPattern == y.bitPattern
        case (.bool(let x), .bool(let y)): x == y
        case (.date(let x), .date(let y)): x == y
        case (.data(let x), .data(let y)): x == y
        case (.array(let x), .array(let y)): x == y
        case (.dictionary(let x), .dictionary(let y)): x == y
        default: false
        }
    }

    public func hash(into hasher: inout Hasher) {
        switch self {
        case .string(let s): hasher.combine(0); hasher.combine(s)
        case .integer(let i): hasher.combine(1); hasher.combine(i)
        case .real(let d): hasher.combine(2); hasher.combine(d.bitPattern)
        case .bool(let b): hasher.combine(3); hasher.combine(b)
        case .date(let d): hasher.combine(4); hasher.combine(d)
        case .data(let d): hasher.combine(5); hasher.combine(d)
        case .array(let a): hasher.combine(6); hasher.combine(a)
        case .dictionary(let d): hasher.combine(7); hasher.combine(d)
        }
    }

    public var description: String { String(decoding: PropertyListWriter.element(self), as: UTF8.self) }

    // MARK: Checks

    /// The deepest nesting of arrays and dictionaries a value may have.
    public static let maxDepth = 100

    /// Fails when the value cannot be written as an XML property list: text with characters
    /// XML 1.0 cannot carry (controls other than tab, newline and return; unpaired
    /// surrogates cannot occur in a Swift string), a date outside the years 1–9999, nesting
    /// deeper than ``maxDepth``.
    public func checkRepresentable(path: String = "the value") throws(CKError) {
        try check(path: path, depth: 0)
    }

    private func check(path: String, depth: Int) throws(CKError) {
        switch self {
        case .string(let s):
            try Self.checkText(s, what: path)
        case .date(let d):
            guard PropertyListWriter.dateText(d) != nil else {
                throw CKError(.invalidArguments, "\(path) is a date outside the years 1 to 9999, which a property list cannot hold")
            }
        case .array(let items):
            guard depth < Self.maxDepth else { throw CKError(.invalidArguments, "\(path) nests arrays and dictionaries deeper than \(Self.maxDepth) levels") }
            for (i, item) in items.enumerated() { try item.check(path: "\(path)[\(i)]", depth: depth + 1) }
        case .dictionary(let members):
            guard depth < Self.maxDepth else { throw CKError(.invalidArguments, "\(path) nests arrays and dictionaries deeper than \(Self.maxDepth) levels") }
            for (k, v) in members {
                try Self.checkText(k, what: "a key in \(path)")
                try v.check(path: "\(path)[\"\(k)\"]", depth: depth + 1)
            }
        case .integer, .real, .bool, .data:
            break
        }
    }

    /// Text XML 1.0 can carry: no control characters but tab, newline and carriage return.
    static func checkText(_ s: String, what: String) throws(CKError) {
        for scalar in s.unicodeScalars {
            let v = scalar.value
            if (v < 0x20 && v != 0x09 && v != 0x0A && v != 0x0D) || v == 0xFFFE || v == 0xFFFF {
                throw CKError(.invalidArguments, "\(what) holds the control character U+\(String(v, radix: 16, uppercase: true)), which an XML property list cannot carry; store such bytes as data")
            }
        }
    }

    // MARK: Dates

    /// A date cut to whole seconds (toward the past), as an XML property list keeps it.
    public static func wholeSeconds(_ date: Date) -> Date {
        Date(timeIntervalSince1970: date.timeIntervalSince1970.rounded(.down))
    }
}
