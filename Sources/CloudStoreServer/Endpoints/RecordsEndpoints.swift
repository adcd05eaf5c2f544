import CloudStore

/// `records/modify`, `records/lookup` and `records/query`.
enum RecordsEndpoints {
    /// CloudKit Web Services' limit on operations, records looked up, and records in one
    /// response (the engine's own limit, for the native API, is 400 items).
    static let maxItems = 200

    // MARK: records/modify

    /// One operation of a modify request, read and checked on its own.
    private enum Planned {
        case save(Record, SaveRule)
        case delete(RecordID, changeTag: String?)
        case failed(CKError, recordName: String?, zone: ZoneID)

        var zone: ZoneID {
            switch self {
            case .save(let r, _): r.recordID.zoneID
            case .delete(let id, _): id.zoneID
            case .failed(_, _, let z): z
            }
        }
    }

    /// Saves and deletes records: one result per operation, in order, each a record, a deleted
    /// record or a record error. `atomic` (the default) holds within each custom zone of the
    /// private database: there one failing operation saves none of that zone's; the default
    /// zone and the public database are never atomic, as at Apple.
    static func modify(_ call: WebCall) throws(CKError) -> JSONValue {
        let db = try call.database()
        let operations = try call.array("operations", limit: maxItems)
        guard !operations.isEmpty else { throw CKError(.invalidArguments, "\"operations\" is empty; give at least one") }
        let zone = try WebRecordCoding.zoneID(call.body["zoneID"], in: db)
        let requestKeys = try call.desiredKeys(call.body["desiredKeys"])
        let atomicAsked = call.body["atomic"]?.boolValue ?? true

        // Operations that change a record without naming its type take the stored one's.
        var storedTypes: [RecordID: String] = [:]
        let untyped = operations.compactMap { (op) -> RecordID? in
            guard op["record"]?["recordType"] == nil, let name = op["record"]?["recordName"]?.stringValue else { return nil }
            let zoneID = (try? op["record"]?["zoneID"].map { (z) throws(CKError) in try WebRecordCoding.zoneID(z, in: db) }) ?? zone
            return RecordID(recordName: name, zoneID: zoneID)
        }
        if !untyped.isEmpty {
            for (id, result) in db.fetch(untyped, desiredKeys: []) {
                if case .success(let r) = result { storedTypes[id] = r.recordType }
            }
        }

        var planned: [Planned] = []
        var keys: [[String]?] = []
        for op in operations {
            do throws(CKError) {
                // Apple's own asset example puts `desiredKeys` inside the record dictionary.
                keys.append(try (op["desiredKeys"] ?? op["record"]?["desiredKeys"]).map { (k) throws(CKError) in try call.desiredKeys(k) } ?? requestKeys)
                planned.append(try plan(op, call: call, zone: zone, db: db, storedTypes: storedTypes))
            } catch {
                if keys.count < planned.count + 1 { keys.append(requestKeys) }
                let opZone = (try? op["record"]?["zoneID"].map { (z) throws(CKError) in try WebRecordCoding.zoneID(z, in: db) }) ?? zone
                planned.append(.failed(error, recordName: op["record"]?["recordName"]?.stringValue, zone: opZone))
            }
        }

        // A reference with the VALIDATE action needs its target: in the zone, or saved here.
        let savedHere = Set(planned.compactMap { (p) -> RecordID? in if case .save(let r, _) = p { r.recordID } else { nil } })
        for (i, item) in planned.enumerated() {
            guard case .save(let record, _) = item else { continue }
            let zoneID = record.recordID.zoneID
            let asked = WebRecordCoding.validatedTargets(operations[i]["record"]).map { RecordID(recordName: $0, zoneID: zoneID) }
                .filter { !savedHere.contains($0) }
            guard !asked.isEmpty else { continue }
            if let missing = db.fetch(asked, desiredKeys: []).first(where: { if case .failure = $0.1 { true } else { false } }) {
                planned[i] = .failed(CKError(.referenceViolation, "record \(record.recordID.recordName) references \(missing.0.recordName) with the VALIDATE action, and zone \(zoneID.zoneName) has no such record; save it first, or in the same request"),
                                     recordName: record.recordID.recordName, zone: zoneID)
            }
        }

        // Each zone's operations go to the engine together, atomic where Apple's are.
        var zoneOrder: [String] = []
        var byZone: [String: [Int]] = [:]
        for (i, item) in planned.enumerated() {
            let z = item.zone.zoneName
            if byZone[z] == nil { zoneOrder.append(z) }
            byZone[z, default: []].append(i)
        }
        var results: [Int: Result<JSONValue, CKError>] = [:]
        for z in zoneOrder {
            let indexes = byZone[z]!
            let atomic = atomicAsked && db.scope != .public && z != ZoneID.defaultZoneName
            let anyFailed = indexes.contains { if case .failed = planned[$0] { true } else { false } }
            var saving: [(Int, Record)] = [], deleting: [(Int, RecordID)] = []
            var options = ModifyOptions(atomic: atomic)
            for i in indexes {
                switch planned[i] {
                case .save(let record, let rule):
                    options.saveRules[record.recordID] = rule
                    saving.append((i, record))
                case .delete(let id, let tag):
                    if let tag { options.deleteChangeTags[id] = tag }
                    deleting.append((i, id))
                case .failed(let error, _, _):
                    results[i] = .failure(error)
                }
            }
            if atomic && anyFailed {
                let notApplied = CKError(.batchRequestFailed, "not saved because another operation in this atomic batch failed in zone \(z); fix that one and send the batch again")
                for (i, _) in saving { results[i] = .failure(notApplied) }
                for (i, _) in deleting { results[i] = .failure(notApplied) }
                continue
            }
            guard !saving.isEmpty || !deleting.isEmpty else { continue }
            let result = try db.modify(saving: saving.map(\.1), deleting: deleting.map(\.1), options: options)
            for (k, (i, sent)) in saving.enumerated() {
                results[i] = result.saveResults[k].1.map { call.encode($0.limited(to: keys[i])) }
                if case .success(let stored) = result.saveResults[k].1 { call.settleUploads(sent: sent, stored: stored, db: db) }
            }
            for (k, (i, _)) in deleting.enumerated() {
                results[i] = result.deleteResults[k].1.map { WebRecordCoding.deleted(result.deleteResults[k].0) }
            }
        }
        var out: [JSONValue] = []
        for (i, item) in planned.enumerated() {
            let name: String? = switch item {
            case .save(let record, _): record.recordID.recordName
            case .delete(let id, _): id.recordName
            case .failed(_, let recordName, _): recordName
            }
            switch results[i] ?? .failure(CKError(.internalError, "operation \(i) got no result")) {
            case .success(let json): out.append(json)
            case .failure(let error): out.append(WebRecordCoding.error(error, recordName: name, zoneID: item.zone))
            }
        }
        return .object(["records": .array(out)])
    }

    /// Reads one operation: its type decides the change-tag check and which fields are written.
    private static func plan(_ op: JSONValue, call: WebCall, zone: ZoneID, db: Database, storedTypes: [RecordID: String]) throws(CKError) -> Planned {
        guard case .object = op, let type = op["operationType"]?.stringValue else {
            throw CKError(.invalidArguments, "an operation needs \"operationType\" (create, update, forceUpdate, replace, forceReplace, delete or forceDelete) and \"record\"")
        }
        guard let raw = op["record"], case .object(var members) = raw else {
            throw CKError(.invalidArguments, "a \(type) operation needs a \"record\" dictionary")
        }
        let tag: String? = switch members["recordChangeTag"] {
        case .string(let s)?: s
        case .int(let i)?: String(i)
        default: nil
        }
        switch type {
        case "delete", "forceDelete":
            guard let name = members["recordName"]?.stringValue else {
                throw CKError(.invalidArguments, "a \(type) operation needs the record's \"recordName\"")
            }
            let zoneID = try members["zoneID"].map { (z) throws(CKError) in try WebRecordCoding.zoneID(z, in: db) } ?? zone
            // A delete without a tag deletes whatever is stored, as Apple's own steps for delete send none.
            return .delete(RecordID(recordName: name, zoneID: zoneID), changeTag: type == "delete" ? tag : nil)
        case "create", "update", "forceUpdate", "replace", "forceReplace":
            break
        default:
            throw CKError(.invalidArguments, "unknown operationType \"\(type)\"; use create, update, forceUpdate, replace, forceReplace, delete or forceDelete")
        }
        if (type == "update" || type == "replace") && tag == nil {
            throw CKError(.invalidArguments, "an \(type) operation needs the \"recordChangeTag\" it is based on; use force\(type.prefix(1).uppercased() + type.dropFirst()) to skip the check")
        }
        if members["recordType"] == nil, type != "create", let name = members["recordName"]?.stringValue {
            let zoneID = try members["zoneID"].map { (z) throws(CKError) in try WebRecordCoding.zoneID(z, in: db) } ?? zone
            guard let stored = storedTypes[RecordID(recordName: name, zoneID: zoneID)] else {
                throw CKError(.unknownItem, type.hasPrefix("force")
                    ? "record \(name) does not exist in zone \(zoneID.zoneName), and the operation gives no \"recordType\" to create it with"
                    : "record \(name) does not exist in zone \(zoneID.zoneName)")
            }
            members["recordType"] = .string(stored)
        }
        // Only update and replace are based on a version; the others ignore a tag they are sent.
        if type != "update" && type != "replace" { members["recordChangeTag"] = nil }
        let record = try call.record(.object(members), zone: zone, db: db)
        let rule: SaveRule = switch type {
        case "create", "replace": SaveRule(checksChangeTag: true, fields: .replaceAll)
        case "update": SaveRule(checksChangeTag: true, fields: .changedKeys)
        case "forceUpdate": SaveRule(checksChangeTag: false, fields: .changedKeys)
        default: SaveRule(checksChangeTag: false, fields: .replaceAll)
        }
        return .save(record, rule)
    }

    // MARK: records/lookup

    /// Fetches records by name: one result per name, in order; a missing one is a `NOT_FOUND`
    /// record error inside the 200.
    static func lookup(_ call: WebCall) throws(CKError) -> JSONValue {
        let db = try call.database()
        let requested = try call.array("records", limit: maxItems)
        let zone = try WebRecordCoding.zoneID(call.body["zoneID"], in: db)
        let requestKeys = try call.desiredKeys(call.body["desiredKeys"])
        var ids: [RecordID] = []
        var keys: [[String]?] = []
        for (i, entry) in requested.enumerated() {
            guard let name = entry["recordName"]?.stringValue else {
                throw CKError(.invalidArguments, "records[\(i)] needs a \"recordName\" string")
            }
            let zoneID = try entry["zoneID"].map { (z) throws(CKError) in try WebRecordCoding.zoneID(z, in: db) } ?? zone
            ids.append(RecordID(recordName: name, zoneID: zoneID))
            keys.append(try entry["desiredKeys"].map { (k) throws(CKError) in try call.desiredKeys(k) } ?? requestKeys)
        }
        let results = db.fetch(ids)
        let out = results.enumerated().map { (i, item) -> JSONValue in
            switch item.1 {
            case .success(let record): call.encode(record.limited(to: keys[i]))
            case .failure(let error): WebRecordCoding.error(error, recordName: ids[i].recordName, zoneID: ids[i].zoneID)
            }
        }
        return .object(["records": .array(out)])
    }

    // MARK: records/query

    /// The records of a query, at most `resultsLimit` (200 at most), in `sortBy` order, with a
    /// `continuationMarker` while more remain.
    static func query(_ call: WebCall) throws(CKError) -> JSONValue {
        let db = try call.database()
        let query = try WebQueryCoding.decode(call.body["query"], db: db)
        let zone = try WebRecordCoding.zoneID(call.body["zoneID"], in: db)
        // `zoneWide` searches every zone; a zoneID given wins, as Apple's reference says.
        let zoneWide = call.body["zoneID"] == nil && call.body["zoneWide"]?.boolValue == true
        var limit = maxItems
        if let asked = call.body["resultsLimit"], asked != .null {
            guard let n = asked.int64Value, n > 0 else { throw CKError(.invalidArguments, "\"resultsLimit\" must be a positive integer") }
            limit = Int(min(n, Int64(maxItems)))
        }
        var cursor: QueryCursor?
        switch call.body["continuationMarker"] {
        case .string(let marker)?: cursor = QueryCursor(text: marker)
        case nil, .null?: break
        default: throw CKError(.invalidArguments, "\"continuationMarker\" must be the string a previous response gave")
        }
        let keys = try call.desiredKeys(call.body["desiredKeys"])
        let result = zoneWide ? try db.queryAllZones(query, limit: limit, cursor: cursor, desiredKeys: keys)
            : try db.query(query, in: zone.zoneName, limit: limit, cursor: cursor, desiredKeys: keys)
        var out: [String: JSONValue] = [
            "records": .array(result.records.map(call.encode))
        ]
        if let next = result.cursor { out["continuationMarker"] = .string(next.text) }
        return .object(out)
    }
}
