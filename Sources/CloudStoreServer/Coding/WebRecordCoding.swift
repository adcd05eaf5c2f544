import CloudStore

/// Records, zone IDs and per-item errors as CloudKit Web Services write them. The record
/// dictionary is the engine's own (``RecordCoding``); the web adds `ownerRecordName`,
/// `numbersAsStrings` and keys of newer clients that the engine does not know.
enum WebRecordCoding {
    /// Record keys a client may send that have no meaning here (sharing, short GUIDs): ignored,
    /// so that a newer client's extra keys do no harm.
    static let recordKeys: Set<String> = ["recordName", "recordType", "zoneID", "fields", "recordChangeTag", "created", "modified", "deleted"]

    // MARK: Responses

    /// A record as a response holds it: system fields, the zone with `ownerRecordName`, and
    /// with `numbersAsStrings` every INT64 and DOUBLE value as a string.
    static func encode(_ record: Record, numbersAsStrings: Bool) -> JSONValue {
        guard case .object(var o) = RecordCoding.encode(record) else { return .null }
        o["zoneID"] = encode(record.recordID.zoneID)
        o["deleted"] = .bool(false)
        if numbersAsStrings, case .object(let fields)? = o["fields"] {
            o["fields"] = .object(fields.mapValues(stringifyNumbers))
        }
        return .object(o)
    }

    /// A deleted record: its name, its zone and `deleted: true`.
    static func deleted(_ id: RecordID) -> JSONValue {
        .object(["recordName": .string(id.recordName), "zoneID": encode(id.zoneID), "deleted": .bool(true)])
    }

    static func encode(_ zoneID: ZoneID) -> JSONValue {
        .object(["zoneName": .string(zoneID.zoneName), "ownerRecordName": .string(zoneID.ownerName)])
    }

    /// A failed item in a batch's 200: the record's name, the code and why.
    static func error(_ error: CKError, recordName: String?) -> JSONValue {
        guard case .object(var o) = error.webServicesDictionary() else { return .null }
        if let recordName { o["recordName"] = .string(recordName) }
        return .object(o)
    }

    private static func stringifyNumbers(_ field: JSONValue) -> JSONValue {
        guard case .object(var f) = field, let type = f["type"]?.stringValue, let value = f["value"] else { return field }
        func string(_ v: JSONValue) -> JSONValue {
            switch v {
            case .int(let i): .string(String(i))
            case .double(let d): .string(String(d))
            default: v
            }
        }
        switch type {
        case "INT64", "DOUBLE": f["value"] = string(value)
        case "INT64_LIST", "DOUBLE_LIST": f["value"] = .array((value.arrayValue ?? []).map(string))
        default: return field
        }
        return .object(f)
    }

    // MARK: Requests

    /// A zone ID of a request: `zoneName`, and the owner as `ownerRecordName` (Apple's page) or
    /// `ownerName` (some clients). Absent: the default zone.
    static func zoneID(_ json: JSONValue?, in db: Database) throws(CKError) -> ZoneID {
        guard let json, json != .null else { return db.zoneID(ZoneID.defaultZoneName) }
        guard let name = json["zoneName"]?.stringValue else {
            throw CKError(.invalidArguments, "a zoneID must be an object with a \"zoneName\" string, as {\"zoneName\": \"_defaultZone\"}")
        }
        return db.zoneID(name)
    }

    /// A record of a request, in `zone` unless it names its own.
    static func decode(_ json: JSONValue, zone: ZoneID, db: Database) throws(CKError) -> RecordCoding.Decoded {
        guard case .object(let o) = json else {
            throw CKError(.invalidArguments, "\"record\" must be a record dictionary with \"recordType\" and \"fields\", found \(json.kindName)")
        }
        var members = o.filter { recordKeys.contains($0.key) }
        members["created"] = nil
        members["modified"] = nil
        members["deleted"] = nil
        let recordZone = try members["zoneID"].map { (z) throws(CKError) in try zoneID(z, in: db) } ?? zone
        members["zoneID"] = .object(["zoneName": .string(recordZone.zoneName), "ownerName": .string(recordZone.ownerName)])
        if case .object(let fields)? = members["fields"] {
            members["fields"] = .object(fields.mapValues(normalizedField))
        }
        return try RecordCoding.decode(.object(members), mode: .input, zoneID: recordZone)
    }

    /// `ASSET` (sent by some clients) is `ASSETID`.
    private static func normalizedField(_ field: JSONValue) -> JSONValue {
        guard case .object(var f) = field, let type = f["type"]?.stringValue else { return field }
        if type == "ASSET" { f["type"] = .string("ASSETID") }
        if type == "ASSET_LIST" { f["type"] = .string("ASSETID_LIST") }
        return .object(f)
    }
}
