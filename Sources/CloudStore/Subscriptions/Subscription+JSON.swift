import Foundation

/// Subscriptions as `subscriptions.json` holds them: CloudKit Web Services subscription
/// dictionaries (`subscriptionType`, `firesOn`, `zoneID`, `notificationInfo`), with the
/// query's predicate as its NSPredicate text.
extension Subscription {
    /// `ownerName`: the owner of the database's zones, for `zoneID`.
    package func json(ownerName: String) -> JSONValue {
        var out: [String: JSONValue] = [
            "subscriptionID": .string(subscriptionID),
            "owner": .string(ownerUserRecordName),
            "created": .int(created),
            "notificationInfo": notificationInfo.json,
        ]
        switch kind {
        case .query(let type, let predicate):
            out["subscriptionType"] = .string("query")
            out["query"] = .object(["recordType": .string(type), "predicate": .string(predicate.description)])
            out["firesOn"] = .array(SubscriptionOptions.triggerNames.filter { options.contains($0.0) }.map { .string($0.1) })
            out["firesOnce"] = .bool(options.contains(.firesOnce))
        case .recordZone(let type):
            out["subscriptionType"] = .string("zone")
            if let type { out["recordType"] = .string(type) }
        case .database(let type):
            out["subscriptionType"] = .string("database")
            if let type { out["recordType"] = .string(type) }
        }
        if let zoneName { out["zoneID"] = .object(["zoneName": .string(zoneName), "ownerName": .string(ownerName)]) }
        return .object(out)
    }

    package init(json: JSONValue, file: String) throws(CKError) {
        func bad(_ what: String) -> CKError {
            CKError(.badDatabase, "\(file): \(what); fix the file by hand or delete that subscription from it, then run `ckfs fsck`")
        }
        guard let id = json["subscriptionID"]?.stringValue else { throw bad("a subscription has no subscriptionID") }
        let info = NotificationInfo(json: json["notificationInfo"])
        let zone = json["zoneID"]?["zoneName"]?.stringValue
        switch json["subscriptionType"]?.stringValue {
        case "query":
            guard let type = json["query"]?["recordType"]?.stringValue, let text = json["query"]?["predicate"]?.stringValue else {
                throw bad("subscription \(id) has no query.recordType or query.predicate")
            }
            let predicate: QueryPredicate
            do { predicate = try PredicateParser.parse(text) } catch {
                throw bad("the predicate of subscription \(id) does not parse (\(error))")
            }
            var options: SubscriptionOptions = []
            for name in json["firesOn"]?.arrayValue ?? [] {
                guard let o = SubscriptionOptions.triggerNames.first(where: { $0.1 == name.stringValue }) else {
                    throw bad("subscription \(id) has an unknown firesOn value \(name); use create, update or delete")
                }
                options.insert(o.0)
            }
            if json["firesOnce"]?.boolValue == true { options.insert(.firesOnce) }
            self.init(recordType: type, predicate: predicate, subscriptionID: id, options: options, zoneName: zone, notificationInfo: info)
        case "zone":
            guard let zone else { throw bad("zone subscription \(id) has no zoneID") }
            self.init(zoneName: zone, recordType: json["recordType"]?.stringValue, subscriptionID: id, notificationInfo: info)
        case "database":
            self = .database(recordType: json["recordType"]?.stringValue, subscriptionID: id, notificationInfo: info)
        default:
            throw bad("subscription \(id) has subscriptionType \(json["subscriptionType"].map { "\($0)" } ?? "missing"); use query, zone or database")
        }
        ownerUserRecordName = json["owner"]?.stringValue ?? ""
        created = json["created"]?.int64Value ?? 0
    }
}

extension NotificationInfo {
    package var json: JSONValue {
        var out: [String: JSONValue] = [:]
        if let alertBody { out["alertBody"] = .string(alertBody) }
        if let title { out["title"] = .string(title) }
        if let soundName { out["soundName"] = .string(soundName) }
        if let category { out["category"] = .string(category) }
        if shouldBadge { out["shouldBadge"] = .bool(true) }
        if shouldSendContentAvailable { out["shouldSendContentAvailable"] = .bool(true) }
        if let desiredKeys { out["desiredKeys"] = .array(desiredKeys.map { .string($0) }) }
        presentation.write(into: &out)
        return .object(out)
    }

    package init(json: JSONValue?) {
        self.init(alertBody: json?["alertBody"]?.stringValue, title: json?["title"]?.stringValue,
                  soundName: json?["soundName"]?.stringValue, category: json?["category"]?.stringValue,
                  shouldBadge: json?["shouldBadge"]?.boolValue ?? false,
                  shouldSendContentAvailable: json?["shouldSendContentAvailable"]?.boolValue ?? false,
                  desiredKeys: json?["desiredKeys"]?.arrayValue?.compactMap(\.stringValue))
        presentation = NotificationPresentation(json: json)
    }
}
