/// Every edge's records come in one way: the mount's file text, `ckfs record save`'s JSON and
/// `records/modify`'s dictionaries are record dictionaries in RecordCoding's input form, made
/// the record a save takes here, with the same typing and the same errors.
extension Database {
    /// A field of a record dictionary as an edge received it (typed by the schema where it
    /// left out its type), returned as RecordCoding's input form takes it.
    package typealias FieldRewrite = (_ key: String, _ field: JSONValue) throws(CKError) -> JSONValue

    /// The record a save takes from a record dictionary in RecordCoding's input form, in
    /// `zoneID` unless it names its own. A field that leaves out `type` takes the schema's type
    /// for it (a field has one type, as CloudKit infers it), else its value's shape; `rewrite`
    /// lets an edge turn its own forms into the input form first (the server's upload
    /// receipts). Integers given for `DOUBLE` and `TIMESTAMP` fields become those types.
    package func recordToSave(_ json: JSONValue, zoneID: ZoneID, rewrite: FieldRewrite = { _, field in field }) throws(CKError) -> Record {
        var json = json
        if case .object(var members) = json, case .object(let fields)? = members["fields"] {
            let known = schemaTypes(of: members["recordType"]?.stringValue, untyped: fields)
            var typed: [String: JSONValue] = [:]
            for (key, field) in fields {
                var field = field
                if case .object(var f) = field, f["type"] == nil, f["value"] != nil, let type = known[key] {
                    f["type"] = .string(type.plainName)
                    field = .object(f)
                }
                typed[key] = try rewrite(key, field)
            }
            members["fields"] = .object(typed)
            json = .object(members)
        }
        return try fitToSchema(try RecordCoding.decode(json, mode: .input, zoneID: zoneID))
    }

    /// The schema's types of the fields of `recordType` sent as `{"value": …}` without a
    /// `type`; read again when the copy in memory lacks one of them (another process may have
    /// added it).
    private func schemaTypes(of recordType: String?, untyped fields: [String: JSONValue]) -> [String: FieldType] {
        let keys = fields.compactMap { key, field in field["type"] == nil && field["value"] != nil ? key : nil }
        guard let recordType, !keys.isEmpty else { return [:] }
        return ((try? container.schema.fields(of: recordType, environment: environment, including: keys)) ?? nil) ?? [:]
    }

    /// Fits untyped input fields to the schema: an integer given for a `DOUBLE` or
    /// `TIMESTAMP` field becomes that type (an input shorthand). The schema is read again when
    /// the copy in memory lacks one of the fields (another process may have added it), so no
    /// save is refused on a stale copy.
    private func fitToSchema(_ decoded: RecordCoding.Decoded) throws(CKError) -> Record {
        var record = decoded.record
        guard !decoded.inferredKeys.isEmpty else { return record }
        let known = try container.schema.fields(of: record.recordType, environment: environment,
                                                including: decoded.inferredKeys.filter { record.fields[$0] != nil }.sorted()) ?? [:]
        for key in decoded.inferredKeys {
            guard let value = record.fields[key], let fixed = known[key], fixed.encrypted(false) != value.type else { continue }
            switch (value, fixed.kind, fixed.isList) {
            case (.int64(let i), .double, false): record.update(key, to: .double(Double(i)))
            case (.int64(let i), .timestamp, false): record.update(key, to: .timestamp(milliseconds: i))
            case (.list(.int64, let vs), .double, true): record.update(key, to: .list(.double, vs.map { if case .int64(let i) = $0 { .double(Double(i)) } else { $0 } }))
            case (.list(.int64, let vs), .timestamp, true): record.update(key, to: .list(.timestamp, vs.map { if case .int64(let i) = $0 { .timestamp(milliseconds: i) } else { $0 } }))
            default: break
            }
        }
        return record
    }
}
