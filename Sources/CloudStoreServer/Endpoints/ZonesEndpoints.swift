import CloudStore

/// `zones/list`, `zones/lookup` and `zones/modify`.
enum ZonesEndpoints {
    static func list(_ call: WebCall) throws(CKError) -> JSONValue {
        if call.scope == .shared {
            let shared = try call.shared()
            var out: [JSONValue] = []
            for zone in try shared.zones() {
                out.append(try dictionary(zone, db: try shared.database(owner: zone.zoneID.ownerName)))
            }
            return .object(["zones": .array(out)])
        }
        let db = try call.database()
        var out: [JSONValue] = []
        for zone in try db.zones() { out.append(try dictionary(zone, db: db)) }
        return .object(["zones": .array(out)])
    }

    /// One zone dictionary or zone error per zone ID asked for. Apple's page calls `zones` a
    /// dictionary: one zone ID alone is taken as a list of one.
    static func lookup(_ call: WebCall) throws(CKError) -> JSONValue {
        var out: [JSONValue] = []
        let asked = call.body["zones"]?.objectValue != nil ? [call.body["zones"]!] : try call.array("zones", limit: RecordsEndpoints.maxItems)
        for entry in asked {
            let db = try call.database(forZone: entry)
            let zone = try WebRecordCoding.zoneID(entry, in: db)
            do throws(CKError) {
                out.append(try dictionary(try db.zone(zone.zoneName), db: db))
            } catch {
                out.append(Self.error(error.code == .unknownItem ? CKError(.zoneNotFound, "zone \(zone.zoneName) does not exist") : error, zone: zone))
            }
        }
        return .object(["zones": .array(out)])
    }

    /// Creates and deletes zones, each operation on its own; one result per operation.
    static func modify(_ call: WebCall) throws(CKError) -> JSONValue {
        let db = try call.database()
        var out: [JSONValue] = []
        for (i, op) in try call.array("operations", limit: RecordsEndpoints.maxItems).enumerated() {
            guard let type = op["operationType"]?.stringValue, let rawZone = op["zone"]?["zoneID"] else {
                throw CKError(.invalidArguments, "operations[\(i)] needs \"operationType\" (create or delete) and \"zone\": {\"zoneID\": {…}}")
            }
            let zone = try WebRecordCoding.zoneID(rawZone, in: db)
            do throws(CKError) {
                switch type {
                case "create":
                    out.append(try dictionary(try db.createZone(zone.zoneName), db: db))
                case "delete":
                    try db.deleteZone(zone.zoneName)
                    out.append(.object(["zoneID": WebRecordCoding.encode(zone), "deleted": .bool(true)]))
                default:
                    throw CKError(.invalidArguments, "unknown zone operationType \"\(type)\"; use create or delete")
                }
            } catch {
                out.append(self.error(error, zone: zone))
            }
        }
        return .object(["zones": .array(out)])
    }

    /// A zone as the web gives it: its ID, its current sync token, and whether a batch in it
    /// applies all or nothing (custom zones only).
    static func dictionary(_ zone: RecordZone, db: Database) throws(CKError) -> JSONValue {
        .object([
            "zoneID": WebRecordCoding.encode(zone.zoneID),
            "syncToken": .string(try db.currentChangeToken(in: zone.zoneID.zoneName).description),
            "atomic": .bool(zone.zoneID.zoneName != ZoneID.defaultZoneName),
        ])
    }

    /// A zone error inside a 200.
    static func error(_ error: CKError, zone: ZoneID) -> JSONValue {
        guard case .object(var o) = error.webServicesDictionary() else { return .null }
        o["zoneID"] = WebRecordCoding.encode(zone)
        return .object(o)
    }
}
