import CloudStore

/// `changes/zone` and the older `records/changes`: a zone's changed and deleted records since a
/// sync token, each record once in its latest state.
enum ChangesEndpoints {
    /// Changes of one zone: `records/changes`.
    static func recordChanges(_ call: WebCall) throws(CKError) -> JSONValue {
        let db = try call.database()
        guard call.body["zoneID"] != nil else { throw CKError(.invalidArguments, "records/changes needs \"zoneID\"") }
        let zone = try WebRecordCoding.zoneID(call.body["zoneID"], in: db)
        var out = try changes(call, db, zone: zone, token: call.body["syncToken"], limit: call.body["resultsLimit"],
                              keys: try call.desiredKeys(call.body["desiredKeys"]), types: nil, numbersAsStrings: call.numbersAsStrings)
        out["reverse"] = .bool(false)
        out["zoneID"] = nil
        return .object(out)
    }

    /// Changes of several zones: `changes/zone`, one result or zone error per zone asked for.
    static func zoneChanges(_ call: WebCall) throws(CKError) -> JSONValue {
        let zones = try call.array("zones", limit: RecordsEndpoints.maxItems)
        let requestKeys = try call.desiredKeys(call.body["desiredKeys"])
        let requestTypes = try call.desiredKeys(call.body["desiredRecordTypes"])
        var out: [JSONValue] = []
        for (i, entry) in zones.enumerated() {
            guard entry["zoneID"] != nil else { throw CKError(.invalidArguments, "zones[\(i)] needs a \"zoneID\"") }
            let db = try call.database(forZone: entry["zoneID"])
            let zone = try WebRecordCoding.zoneID(entry["zoneID"], in: db)
            do throws(CKError) {
                if (entry["reverse"] ?? call.body["reverse"])?.boolValue == true {
                    throw CKError(.invalidArguments, "\"reverse\": true is not supported: a zone's changes come oldest first; leave it out, and order the records yourself if you need the newest first")
                }
                let keys = try entry["desiredKeys"].map { (k) throws(CKError) in try call.desiredKeys(k) } ?? requestKeys
                let types = try entry["desiredRecordTypes"].map { (k) throws(CKError) in try call.desiredKeys(k) } ?? requestTypes
                // A zone dictionary holds the request's keys: its own `numbersAsStrings` counts.
                let strings = (entry["numbersAsStrings"] ?? entry["numberAsStrings"])?.boolValue ?? call.numbersAsStrings
                out.append(.object(try changes(call, db, zone: zone, token: entry["syncToken"], limit: entry["resultsLimit"] ?? call.body["resultsLimit"],
                                               keys: keys, types: types, numbersAsStrings: strings)))
            } catch {
                out.append(ZonesEndpoints.error(error, zone: zone))
            }
        }
        return .object(["zones": .array(out)])
    }

    /// Which zones changed since a database sync token: `changes/database`, and the older
    /// `zones/changes` (with `metaSyncToken`); each changed zone as a zone dictionary
    /// (`zoneID`, `syncToken`, `atomic`), as both of Apple's pages give it.
    static func databaseChanges(_ call: WebCall) throws(CKError) -> JSONValue {
        try databaseChanges(call, tokenKey: "syncToken")
    }

    static func zonesChanges(_ call: WebCall) throws(CKError) -> JSONValue {
        try databaseChanges(call, tokenKey: "metaSyncToken")
    }

    private static func databaseChanges(_ call: WebCall, tokenKey: String) throws(CKError) -> JSONValue {
        var token: DatabaseChangeToken?
        switch call.body[tokenKey] {
        case .string(let s)?:
            guard let t = DatabaseChangeToken(string: s) else {
                throw CKError(.invalidArguments, "\"\(tokenKey)\" is not one this server gave; leave it out to list every zone")
            }
            token = t
        case nil, .null?: break
        default: throw CKError(.invalidArguments, "\"\(tokenKey)\" must be the string a previous response gave")
        }
        var limit: Int?
        if let raw = call.body["resultsLimit"], raw != .null {
            guard let n = raw.int64Value, n > 0 else { throw CKError(.invalidArguments, "\"resultsLimit\" must be a positive integer") }
            limit = Int(min(n, Int64(RecordsEndpoints.maxItems)))
        }
        // The shared database's zones are every owner's who shares with the caller.
        var shared: SharedDatabase?
        var own: Database?
        let changes: DatabaseChanges
        if call.scope == .shared {
            let s = try call.shared()
            shared = s
            changes = try s.databaseChanges(since: token, limit: limit)
        } else {
            let d = try call.database()
            own = d
            changes = try d.databaseChanges(since: token, limit: limit)
        }
        var zones: [JSONValue] = []
        for zone in changes.changed {
            let db: Database
            if let own { db = own } else { db = try shared!.database(owner: zone.ownerName) }
            if let found = try? db.zone(zone.zoneName) {
                zones.append(try ZonesEndpoints.dictionary(found, db: db))
            } else {
                zones.append(.object(["zoneID": WebRecordCoding.encode(zone)]))
            }
        }
        zones += changes.deleted.map { .object(["zoneID": WebRecordCoding.encode($0), "deleted": .bool(true)]) }
        return .object(["zones": .array(zones), tokenKey: .string(changes.token.description), "moreComing": .bool(changes.moreComing)])
    }

    private static func changes(_ call: WebCall, _ db: Database, zone: ZoneID, token raw: JSONValue?, limit rawLimit: JSONValue?,
                                keys: [String]?, types: [String]?, numbersAsStrings: Bool) throws(CKError) -> [String: JSONValue] {
        var token: ChangeToken?
        switch raw {
        case .string(let s)?:
            guard let t = ChangeToken(string: s) else {
                throw CKError(.invalidArguments, "\"syncToken\" \(s) is not one this server gave; leave it out to fetch every change")
            }
            token = t
        case nil, .null?: break
        default: throw CKError(.invalidArguments, "\"syncToken\" must be the string a previous response gave")
        }
        var limit = RecordsEndpoints.maxItems
        if let rawLimit, rawLimit != .null {
            guard let n = rawLimit.int64Value, n > 0 else { throw CKError(.invalidArguments, "\"resultsLimit\" must be a positive integer") }
            limit = Int(min(n, Int64(RecordsEndpoints.maxItems)))
        }
        _ = try db.currentChangeToken(in: zone.zoneName)
        let changes = try db.changes(in: zone.zoneName, since: token, limit: limit, desiredKeys: keys)
        var records = changes.changed
            .filter { types == nil || types!.contains($0.recordType) }
            .map { call.encode($0, numbersAsStrings: numbersAsStrings) }
        // Deletions of the types asked for too (a deletion whose type the log does not say stays).
        records += changes.deleted
            .filter { id in types == nil || changes.deletedRecordTypes[id.recordName].map { types!.contains($0) } ?? true }
            .map(WebRecordCoding.deleted)
        return [
            "zoneID": WebRecordCoding.encode(zone),
            "records": .array(records),
            "syncToken": .string(changes.token.description),
            "moreComing": .bool(changes.moreComing),
        ]
    }
}
