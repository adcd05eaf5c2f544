import Foundation

extension PropertyListValue {
    /// The value of JSON text's value: objects become dictionaries, numbers integers or reals.
    /// JSON's `null` has no property-list form and fails.
    public init(json: JSONValue) throws(CKError) {
        switch json {
        case .null: throw CKError(.invalidArguments, "null has no property-list form; remove the key instead, or leave the member out")
        case .bool(let b): self = .bool(b)
        case .int(let i): self = .integer(i)
        case .double(let d): self = .real(d)
        case .string(let s): self = .string(s)
        case .array(let items):
            var out: [PropertyListValue] = []
            for item in items { out.append(try PropertyListValue(json: item)) }
            self = .array(out)
        case .object(let members):
            var out: [String: PropertyListValue] = [:]
            for (k, v) in members { out[k] = try PropertyListValue(json: v) }
            self = .dictionary(out)
        }
    }

    /// The value as JSON, for printing: dates as ISO 8601 text, data as base64 text, reals
    /// JSON cannot write (NaN, infinities) as text.
    public var jsonValue: JSONValue {
        switch self {
        case .string(let s): .string(s)
        case .integer(let i): .int(i)
        case .real(let d): d.isFinite ? .double(d) : .string(PropertyListWriter.realText(d))
        case .bool(let b): .bool(b)
        case .date(let d): .string(PropertyListWriter.dateText(d) ?? "")
        case .data(let d): .string(Data(d).base64EncodedString())
        case .array(let items): .array(items.map(\.jsonValue))
        case .dictionary(let members): .object(members.mapValues(\.jsonValue))
        }
    }

    /// A date written `YYYY-MM-DDTHH:MM:SSZ`, as in property lists; nil for other text.
    public static func date(iso8601 text: String) -> Date? { PropertyListParser.date(text) }
}
