import Foundation

/// The last record of a page: its sort values and name.
package struct CursorPosition {
    var recordName: String
    var values: [FieldValue?]
    /// The record's zone, in a query across zones.
    var zoneName: String?

    init(recordName: String, values: [FieldValue?], zoneName: String? = nil) {
        self.recordName = recordName
        self.values = values
        self.zoneName = zoneName
    }

    /// The query a cursor belongs to, as text: a cursor of another query is refused. The sort
    /// descriptors are appended one by one, with "," between them: the standard library's
    /// `joined(separator:)` is generic code whose first call in a process searches every
    /// conformance record in the binary (docs/Performance.md, row 10).
    private static func signature(_ query: RecordQuery, zone: String) -> String {
        var text = "\(zone)\u{1}\(query.recordType)\u{1}\(query.predicate)\u{1}"
        for (i, d) in query.sortDescriptors.enumerated() {
            if i > 0 { text += "," }
            text += "\(d.key):\(d.ascending)" + (d.relativeLocation.map { "@\($0.latitude),\($0.longitude)" } ?? "")
        }
        return text
    }

    func cursor(for query: RecordQuery, zone: String) -> QueryCursor {
        var fields: [String: JSONValue] = [
            "q": .string(String(CRC32C.checksum(Array(Self.signature(query, zone: zone).utf8)), radix: 16)),
            "name": .string(recordName),
            "values": .array(values.map { $0.map { RecordCoding.encodeField($0) } ?? .null }),
        ]
        if let zoneName { fields["zone"] = .string(zoneName) }
        let json: JSONValue = .object(fields)
        // base64url without padding, mapped by hand (Foundation's replacingOccurrences took 5%
        // of a query).
        let b64 = Data(JSONWriter.compact(json)).base64EncodedString().utf8.compactMap { c -> UInt8? in
            switch c {
            case UInt8(ascii: "+"): UInt8(ascii: "-")
            case UInt8(ascii: "/"): UInt8(ascii: "_")
            case UInt8(ascii: "="): nil
            default: c
            }
        }
        return QueryCursor(text: String(decoding: b64, as: UTF8.self))
    }

    init(_ cursor: QueryCursor, for query: RecordQuery, zone: String) throws(CKError) {
        let bad = CKError(.invalidArguments, "the cursor is not one this query gave; pass the cursor of the same query, zone and sort")
        var b64 = cursor.text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while b64.count % 4 != 0 { b64 += "=" }
        guard let data = Data(base64Encoded: b64), let json = try? JSONParser.parse(Array(data)),
              json["q"]?.stringValue == String(CRC32C.checksum(Array(Self.signature(query, zone: zone).utf8)), radix: 16),
              let name = json["name"]?.stringValue, let raw = json["values"]?.arrayValue, raw.count == query.sortDescriptors.count else { throw bad }
        var values: [FieldValue?] = []
        for v in raw {
            if v == .null { values.append(nil); continue }
            guard case .object = v, let typeName = v["type"]?.stringValue, let type = FieldType(name: typeName), let inner = v["value"],
                  let decoded = try? RecordCoding.decodeValue(inner, as: type, key: "cursor", fraction: v["fraction"]) else { throw bad }
            values.append(decoded)
        }
        self.init(recordName: name, values: values, zoneName: json["zone"]?.stringValue)
    }
}
