import CloudStore

/// Records, zone IDs and per-item errors as CloudKit Web Services write them. The record
/// dictionary is the engine's own (``RecordCoding``); the web adds `ownerRecordName`,
/// `numbersAsStrings` and keys of newer clients that the engine does not know.
enum WebRecordCoding {
    /// The record keys a request passes to the engine; others a client may send (short GUIDs,
    /// keys of newer clients) are dropped, so that they do no harm.
    static let recordKeys: Set<String> = ["recordName", "recordType", "zoneID", "fields", "recordChangeTag", "created", "modified", "deleted",
                                          "parent", "participants", "publicPermission", "rootRecordName", "allowsAccessRequests", "requesters",
                                          "blockedIdentities"]

    // MARK: Responses

    /// A record as a response holds it: system fields, the zone with `ownerRecordName`, each
    /// asset with the `downloadURL` that `downloadURL` makes for it, and with
    /// `numbersAsStrings` every INT64 and DOUBLE value as a string. Dates are milliseconds, as
    /// Apple's: the `fraction` of a millisecond the store keeps is not sent.
    ///
    /// A share also gives its `owner` and, when the caller is one of its participants, its
    /// `currentUserParticipant` (`caller` gives the caller's user record name, asked only for
    /// a share), as Apple's Share Response Keys list them.
    static func encode(_ record: Record, numbersAsStrings: Bool, caller: () -> String? = { nil }, downloadURL: (Asset) -> String) -> JSONValue {
        guard case .object(var o) = RecordCoding.encode(record) else { return .null }
        o["zoneID"] = encode(record.recordID.zoneID)
        o["deleted"] = .bool(false)
        if let info = record.shareInfo {
            if let owner = info.participants.first(where: { $0.role == .owner }) { o["owner"] = RecordCoding.encode(owner) }
            if let name = caller(), let me = info.participants.first(where: { $0.userRecordName == name }) {
                o["currentUserParticipant"] = RecordCoding.encode(me)
            }
        }
        guard case .object(var fields)? = o["fields"] else { return .object(o) }
        for (key, value) in record.fields {
            switch value {
            case .asset(let a): fields[key] = .object(["type": .string("ASSETID"), "value": assetValue(a, downloadURL)])
            case .list(.asset, let items):
                let values = items.map { (item) -> JSONValue in if case .asset(let a) = item { assetValue(a, downloadURL) } else { .null } }
                fields[key] = .object(["type": .string("ASSETID_LIST"), "value": .array(values)])
            case .timestamp, .list(.timestamp, _):
                if case .object(var field)? = fields[key], field.removeValue(forKey: "fraction") != nil { fields[key] = .object(field) }
            default: break
            }
        }
        o["fields"] = .object(numbersAsStrings ? fields.mapValues(stringifyNumbers) : fields)
        return .object(o)
    }

    private static func assetValue(_ asset: Asset, _ downloadURL: (Asset) -> String) -> JSONValue {
        .object(["fileChecksum": .string(asset.fileChecksum), "size": .int(asset.size), "downloadURL": .string(downloadURL(asset))])
    }

    /// A deleted record: its name, its zone and `deleted: true`.
    static func deleted(_ id: RecordID) -> JSONValue {
        .object(["recordName": .string(id.recordName), "zoneID": encode(id.zoneID), "deleted": .bool(true)])
    }

    static func encode(_ zoneID: ZoneID) -> JSONValue {
        .object(["zoneName": .string(zoneID.zoneName), "ownerRecordName": .string(zoneID.ownerName)])
    }

    /// A failed item in a batch's 200: the record's name, the code and why.
    static func error(_ error: CKError, recordName: String?, zoneID: ZoneID? = nil) -> JSONValue {
        guard case .object(var o) = error.webServicesDictionary() else { return .null }
        if let recordName { o["recordName"] = .string(recordName) }
        if let zoneID { o["zoneID"] = encode(zoneID) }
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
        if db.scope == .shared, let owner = json["ownerRecordName"]?.stringValue ?? json["ownerName"]?.stringValue, owner != db.ownerName {
            throw CKError(.invalidArguments, "zone \(name) of \(owner) is not in this request's zones, which are \(db.ownerName)'s: one request of the shared database works in the zones of one owner")
        }
        return db.zoneID(name)
    }

    /// A record of a request, in `zone` unless it names its own. An asset value with a
    /// `receipt` becomes the file `stagedFile` gives for it, which the save copies into the zone.
    static func record(_ json: JSONValue, zone: ZoneID, db: Database,
                       stagedFile: (String) throws(CKError) -> String) throws(CKError) -> Record {
        guard case .object(let o) = json else {
            throw CKError(.invalidArguments, "\"record\" must be a record dictionary with \"recordType\" and \"fields\", found \(json.kindName)")
        }
        var members = o.filter { recordKeys.contains($0.key) }
        if let type = members["recordType"]?.stringValue { members["recordType"] = .string(recordType(type)) }
        // A new share names its root as Apple's requests do: `forRecord`.
        if members["rootRecordName"] == nil, let root = o["forRecord"]?["recordName"] { members["rootRecordName"] = root }
        members["created"] = nil
        members["modified"] = nil
        members["deleted"] = nil
        let recordZone = try members["zoneID"].map { (z) throws(CKError) in try zoneID(z, in: db) } ?? zone
        members["zoneID"] = .object(["zoneName": .string(recordZone.zoneName), "ownerName": .string(recordZone.ownerName)])
        return try db.recordToSave(.object(members), zoneID: recordZone) { (key, field) throws(CKError) -> JSONValue in
            let normalized = try normalizedField(field, stagedFile: stagedFile)
            try checkReferencesStayIn(recordZone, field: key, normalized)
            return normalized
        }
    }

    /// A record type as a request names it: Apple's pages spell the share type `cloudKit.share`
    /// as well as `cloudkit.share`.
    static func recordType(_ name: String) -> String {
        name.lowercased() == ShareInfo.recordType ? ShareInfo.recordType : name
    }

    /// The record names a record dictionary's references with the VALIDATE action point at:
    /// each must exist (in the zone, or saved by the same request) for the record to be saved.
    static func validatedTargets(_ record: JSONValue?) -> [String] {
        guard case .object(let fields)? = record?["fields"] else { return [] }
        var names: [String] = []
        for field in fields.values {
            guard let value = field["value"] else { continue }
            for reference in value.arrayValue ?? [value] where reference["action"]?.stringValue == "VALIDATE" {
                if let name = reference["recordName"]?.stringValue { names.append(name) }
            }
        }
        return names
    }

    /// A reference value (or list) with VALIDATE actions made NONE; nil when it has none.
    private static func withoutValidate(_ value: JSONValue) -> JSONValue? {
        func fixed(_ reference: JSONValue) -> JSONValue? {
            guard case .object(var r) = reference, r["action"]?.stringValue == "VALIDATE" else { return nil }
            r["action"] = .string("NONE")
            return .object(r)
        }
        if case .array(let items) = value {
            let changed = items.map { fixed($0) ?? $0 }
            return changed == items ? nil : .array(changed)
        }
        return fixed(value)
    }

    /// A reference names a record of its own record's zone, as CloudKit's do: a reference
    /// dictionary whose `zoneID` names another zone is refused, never taken as one into this zone.
    private static func checkReferencesStayIn(_ zone: ZoneID, field key: String, _ field: JSONValue?) throws(CKError) {
        guard let field, let value = field["value"] else { return }
        let type = field["type"]?.stringValue
        let shaped = value["recordName"] != nil || value.arrayValue?.first?["recordName"] != nil
        guard type == "REFERENCE" || type == "REFERENCE_LIST" || (type == nil && shaped) else { return }
        for reference in value.arrayValue ?? [value] {
            guard let other = reference["zoneID"]?["zoneName"]?.stringValue, other != zone.zoneName else { continue }
            throw CKError(.invalidArguments, "field \"\(key)\" references a record of zone \(other), but a reference names a record of its own record's zone (\(zone.zoneName)); save the two records in one zone")
        }
    }

    /// A field as Web Services clients send it, in the engine's input form. A field without
    /// `type` has the schema's already when the record type has the field (MistKit never
    /// sends `type`; CloudKit JS leaves it out when the caller does; ``Database/recordToSave``
    /// adds it), else takes it from its value's shape (``RecordCoding/infer(_:key:)``). `ASSET`
    /// (sent by some clients) is `ASSETID`; an untyped value with a receipt or a checksum is an
    /// asset (Apple's own example sends no type); receipts become staged files.
    private static func normalizedField(_ field: JSONValue, stagedFile: (String) throws(CKError) -> String) throws(CKError) -> JSONValue {
        guard case .object(var f) = field, var value = f["value"] else { return field }
        // A reference's VALIDATE action is NONE once the target is found to exist
        // (``validatedTargets(_:)``, checked by records/modify).
        if let validated = withoutValidate(value) {
            value = validated
            f["value"] = value
        }
        var type = f["type"]?.stringValue
        if type == nil, value["receipt"] != nil || value["fileChecksum"] != nil { type = "ASSETID" }
        if type == nil, let first = value.arrayValue?.first, first["receipt"] != nil || first["fileChecksum"] != nil { type = "ASSETID_LIST" }
        if type == "ASSET" { type = "ASSETID" }
        if type == "ASSET_LIST" { type = "ASSETID_LIST" }
        guard let type else { return .object(f) }
        f["type"] = .string(type)
        // A web client names an asset by the receipt of its upload, or by the checksum of one
        // its record already holds; never by a path on the server (the engine's input form for
        // the CLI), which would copy any file the server can read into the caller's zone.
        func asset(_ v: JSONValue) throws(CKError) -> JSONValue {
            guard case .object(let members) = v else { return v }
            if members["path"] != nil {
                throw CKError(.invalidArguments, "an asset value is the singleFile dictionary of its upload (with its \"receipt\"), or one a fetched record gave; upload files with assets/upload")
            }
            guard let receipt = members["receipt"]?.stringValue else { return v }
            return .object(["path": .string(try stagedFile(receipt))])
        }
        if type == "ASSETID" { f["value"] = try asset(value) }
        if type == "ASSETID_LIST", case .array(let items) = value {
            var out: [JSONValue] = []
            for item in items { out.append(try asset(item)) }
            f["value"] = .array(out)
        }
        return .object(f)
    }
}
