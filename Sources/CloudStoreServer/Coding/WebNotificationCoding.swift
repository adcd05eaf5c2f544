import CloudStore

/// A notification as the web courier delivers it: the APNs payload CloudKit sends to devices,
/// `{"aps": {…}, "ck": {"cid", "nid", "qry" | "fet" | "met": {…}}}`.
enum WebNotificationCoding {
    static func payload(_ n: CloudNotification, container: String) -> JSONValue {
        var aps: [String: JSONValue] = [:]
        var alert: [String: JSONValue] = [:]
        if let body = n.alertBody { alert["body"] = .string(body) }
        if let title = n.title { alert["title"] = .string(title) }
        if !alert.isEmpty { aps["alert"] = .object(alert) }
        if let sound = n.soundName { aps["sound"] = .string(sound) }
        if let category = n.category { aps["category"] = .string(category) }
        if n.contentAvailable { aps["content-available"] = .int(1) }
        // CKDatabase.Scope's numbers: public 1, private 2.
        let dbs: Int64 = n.databaseScope == .public ? 1 : 2
        var ck: [String: JSONValue] = ["cid": .string(container), "nid": .string(n.notificationID)]
        if n.isPruned { ck["p"] = .bool(true) }
        switch n.kind {
        case .query:
            var qry: [String: JSONValue] = [
                "sid": .string(n.subscriptionID), "zid": .string(n.zoneID.zoneName), "zoid": .string(n.zoneID.ownerName), "dbs": .int(dbs),
            ]
            if let name = n.recordID?.recordName { qry["rid"] = .string(name) }
            switch n.reason {
            case .recordCreated?: qry["fo"] = .int(1)
            case .recordUpdated?: qry["fo"] = .int(2)
            case .recordDeleted?: qry["fo"] = .int(3)
            case nil: break
            }
            if !n.recordFields.isEmpty {
                qry["af"] = .object(n.recordFields.mapValues { RecordCoding.encodeField($0)["value"] ?? .null })
            }
            ck["qry"] = .object(qry)
        case .recordZone:
            ck["fet"] = .object(["sid": .string(n.subscriptionID), "zid": .string(n.zoneID.zoneName),
                                 "zoid": .string(n.zoneID.ownerName), "dbs": .int(dbs)])
        case .database:
            ck["met"] = .object(["sid": .string(n.subscriptionID), "dbs": .int(dbs)])
        }
        return .object(["aps": .object(aps), "ck": .object(ck)])
    }
}
