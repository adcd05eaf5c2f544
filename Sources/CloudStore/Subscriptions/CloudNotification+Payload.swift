/// The APNs payload CloudKit pushes to a device for a notification, which the web courier
/// delivers and `CKNotification(fromRemoteNotificationDictionary:)` reads:
/// `{"aps": {…}, "ck": {"cid", "nid", "p", "qry" | "fet" | "met": {…}}}`. Apple does not
/// document the `ck` keys; these are the ones OpenCloudKit reads.
extension CloudNotification {
    /// CKDatabase.Scope's numbers, as `dbs` carries them.
    private static let scopeNumbers: [DatabaseScope: Int64] = [.public: 1, .private: 2, .shared: 3]
    /// CKQueryNotification.Reason's numbers, as `fo` carries them.
    private static let reasonNumbers: [Reason: Int64] = [.recordCreated: 1, .recordUpdated: 2, .recordDeleted: 3]

    /// The payload for a device of `container`.
    public func apnsPayload(container: String) -> JSONValue {
        var aps: [String: JSONValue] = [:]
        var alert: [String: JSONValue] = [:]
        if let alertBody { alert["body"] = .string(alertBody) }
        if let title { alert["title"] = .string(title) }
        presentation.writeAPNS(alert: &alert, aps: &aps)
        if !alert.isEmpty { aps["alert"] = .object(alert) }
        if let soundName { aps["sound"] = .string(soundName) }
        if let category { aps["category"] = .string(category) }
        if contentAvailable { aps["content-available"] = .int(1) }
        if shouldBadge { aps["badge"] = .int(1) }
        let dbs = JSONValue.int(Self.scopeNumbers[databaseScope] ?? 2)
        var ck: [String: JSONValue] = ["cid": .string(container), "nid": .string(notificationID)]
        if isPruned { ck["p"] = .bool(true) }
        switch kind {
        case .query:
            var qry: [String: JSONValue] = ["sid": .string(subscriptionID), "zid": .string(zoneID.zoneName), "zoid": .string(zoneID.ownerName), "dbs": dbs]
            if let name = recordID?.recordName { qry["rid"] = .string(name) }
            if let reason, let number = Self.reasonNumbers[reason] { qry["fo"] = .int(number) }
            if !recordFields.isEmpty { qry["af"] = .object(recordFields.mapValues { RecordCoding.encodeField($0)["value"] ?? .null }) }
            ck["qry"] = .object(qry)
        case .recordZone:
            ck["fet"] = .object(["sid": .string(subscriptionID), "zid": .string(zoneID.zoneName), "zoid": .string(zoneID.ownerName), "dbs": dbs])
        case .database:
            ck["met"] = .object(["sid": .string(subscriptionID), "dbs": dbs])
        }
        return .object(["aps": .object(aps), "ck": .object(ck)])
    }

    /// The notification a payload carries, and the container it names; `invalidArguments`
    /// saying what is missing when `json` is not a CloudKit payload. What a payload does not
    /// carry (who changed what, when, the record type) is left empty.
    public static func fromAPNSPayload(_ json: JSONValue) throws(CKError) -> (notification: CloudNotification, container: String?) {
        guard let ck = json["ck"]?.objectValue else {
            throw CKError(.invalidArguments, "the notification dictionary has no \"ck\" part: it is not a CloudKit notification")
        }
        let parts: [(String, Kind)] = [("qry", .query), ("fet", .recordZone), ("met", .database)]
        guard let (key, kind) = parts.first(where: { ck[$0.0] != nil }), let body = ck[key]?.objectValue else {
            throw CKError(.invalidArguments, "the notification's \"ck\" part has none of \"qry\", \"fet\" or \"met\"")
        }
        guard let subscriptionID = body["sid"]?.stringValue else {
            throw CKError(.invalidArguments, "the notification's \"ck\".\"\(key)\" has no subscription ID (\"sid\")")
        }
        let scopeNumber = body["dbs"]?.int64Value ?? 2
        guard let scope = scopeNumbers.first(where: { $0.value == scopeNumber })?.key else {
            throw CKError(.invalidArguments, "the notification names database scope \(scopeNumber); ckfs has 1 (public), 2 (private) and 3 (shared)")
        }
        let zoneID = ZoneID(zoneName: body["zid"]?.stringValue ?? ZoneID.defaultZoneName, ownerName: body["zoid"]?.stringValue ?? ZoneID.currentUserOwnerName)
        var n = try CloudNotification(json: .object([
            "notificationID": .string(ck["nid"]?.stringValue ?? ""), "type": .string(kind.rawValue), "subscriptionID": .string(subscriptionID),
            "database": .string(scope.rawValue), "zoneID": .object(["zoneName": .string(zoneID.zoneName), "ownerName": .string(zoneID.ownerName)]),
        ]))
        n.recordID = body["rid"]?.stringValue.map { RecordID(recordName: $0, zoneID: zoneID) }
        n.reason = body["fo"]?.int64Value.flatMap { number in reasonNumbers.first { $0.value == number }?.key }
        for (field, value) in body["af"]?.objectValue ?? [:] {
            if let fieldValue = inferredField(value) { n.recordFields[field] = fieldValue }
        }
        n.isPruned = ck["p"]?.boolValue ?? (ck["p"]?.int64Value).map { $0 != 0 } ?? false
        let aps = json["aps"]
        n.alertBody = aps?["alert"]?["body"]?.stringValue ?? aps?["alert"]?.stringValue
        n.title = aps?["alert"]?["title"]?.stringValue
        n.soundName = aps?["sound"]?.stringValue
        n.category = aps?["category"]?.stringValue
        n.shouldBadge = aps?["badge"] != nil
        n.contentAvailable = aps?["content-available"]?.int64Value == 1
        n.presentation = NotificationPresentation(aps: aps)
        return (n, ck["cid"]?.stringValue)
    }

    /// A desired field's value as the payload carries it, without its type: text, numbers and
    /// their lists, a location or a reference by its keys; nil for what cannot be told apart.
    private static func inferredField(_ value: JSONValue) -> FieldValue? {
        switch value {
        case .string(let s): return .string(s)
        case .int(let i): return .int64(i)
        case .double(let d): return .double(d)
        case .bool(let b): return .int64(b ? 1 : 0)
        case .array(let items):
            if items.allSatisfy({ $0.stringValue != nil }) { return .list(.string, items.compactMap(\.stringValue).map { .string($0) }) }
            if items.allSatisfy({ $0.int64Value != nil }) { return .list(.int64, items.compactMap(\.int64Value).map { .int64($0) }) }
            if items.allSatisfy({ $0.doubleValue != nil }) { return .list(.double, items.compactMap(\.doubleValue).map { .double($0) }) }
            return nil
        case .object(let members):
            if members["latitude"] != nil { return try? RecordCoding.decodeValue(value, as: FieldType(.location), key: "") }
            if members["recordName"] != nil { return try? RecordCoding.decodeValue(value, as: FieldType(.reference), key: "") }
            return nil
        case .null: return nil
        }
    }
}
