import CloudStore

/// Subscription dictionaries of CloudKit Web Services (`subscriptionType`, `query`, `zoneID`,
/// `zoneWide`, `firesOn`, `firesOnce`, `notificationInfo`) and the engine's ``Subscription``.
enum WebSubscriptionCoding {
    static func encode(_ s: Subscription, db: Database) -> JSONValue {
        var o: [String: JSONValue] = ["subscriptionID": .string(s.subscriptionID)]
        switch s.kind {
        case .query(let type, let predicate):
            o["subscriptionType"] = .string("query")
            var query: [String: JSONValue] = ["recordType": .string(type)]
            if let filters = WebQueryCoding.encode(predicate) {
                if !filters.isEmpty { query["filterBy"] = .array(filters) }
            } else {
                // A predicate saved by the CLI or the Swift API that filters cannot say.
                query["predicate"] = .string(predicate.description)
            }
            o["query"] = .object(query)
            o["firesOn"] = .array([(SubscriptionOptions.firesOnRecordCreation, "create"), (.firesOnRecordUpdate, "update"),
                                   (.firesOnRecordDeletion, "delete")].filter { s.options.contains($0.0) }.map { .string($0.1) })
            o["firesOnce"] = .bool(s.options.contains(.firesOnce))
            o["zoneWide"] = .bool(s.zoneName == nil)
        case .recordZone(let type):
            o["subscriptionType"] = .string("zone")
            if let type { o["recordType"] = .string(type) }
        case .database(let type):
            // Not in Apple's Web Services; a database subscription saved through the Swift API
            // or the CLI is listed, and saves back, as this type.
            o["subscriptionType"] = .string("database")
            if let type { o["recordType"] = .string(type) }
        }
        if let zone = s.zoneName { o["zoneID"] = WebRecordCoding.encode(db.zoneID(zone)) }
        let info = s.notificationInfo
        var n: [String: JSONValue] = ["shouldBadge": .bool(info.shouldBadge), "shouldSendContentAvailable": .bool(info.shouldSendContentAvailable)]
        if let v = info.alertBody { n["alertBody"] = .string(v) }
        if let v = info.title { n["title"] = .string(v) }
        if let v = info.soundName { n["soundName"] = .string(v) }
        if let v = info.category { n["category"] = .string(v) }
        if let v = info.desiredKeys { n["desiredKeys"] = .array(v.map { .string($0) }) }
        // Apple's names (alertLocalizationKey, alertLocalizationArgs, alertActionLocalizationKey,
        // alertLaunchImage) are the store's, and so are the other parts the Swift API sets.
        info.presentation.write(into: &n)
        o["notificationInfo"] = .object(n)
        return .object(o)
    }

    /// A subscription of a `create` or `update` operation.
    static func decode(_ json: JSONValue, db: Database) throws(CKError) -> Subscription {
        guard case .object = json else { throw CKError(.invalidArguments, "\"subscription\" must be a subscription dictionary") }
        let id = json["subscriptionID"]?.stringValue
        let info = try notificationInfo(json["notificationInfo"])
        let zone: String? = try json["zoneID"].flatMap { (z) throws(CKError) -> String? in
            z == .null ? nil : try WebRecordCoding.zoneID(z, in: db).zoneName
        }
        switch json["subscriptionType"]?.stringValue {
        case "query":
            guard let rawQuery = json["query"] else { throw CKError(.invalidArguments, "a query subscription needs \"query\" with \"recordType\"") }
            let query = try WebQueryCoding.decode(rawQuery, db: db)
            var options: SubscriptionOptions = []
            let firesOn = json["firesOn"]?.arrayValue ?? [.string("create"), .string("update"), .string("delete")]
            for name in firesOn {
                switch name.stringValue {
                case "create": options.insert(.firesOnRecordCreation)
                case "update": options.insert(.firesOnRecordUpdate)
                case "delete": options.insert(.firesOnRecordDeletion)
                default: throw CKError(.invalidArguments, "\"firesOn\" takes create, update and delete, not \(name)")
                }
            }
            if json["firesOnce"]?.boolValue == true { options.insert(.firesOnce) }
            // zoneWide (the default) watches every zone; otherwise the zone given, or the default zone.
            let zoneWide = json["zoneWide"]?.boolValue ?? (zone == nil)
            return Subscription(recordType: query.recordType, predicate: query.predicate, subscriptionID: id, options: options,
                                zoneName: zoneWide ? nil : (zone ?? ZoneID.defaultZoneName), notificationInfo: info)
        case "zone":
            guard let zone else { throw CKError(.invalidArguments, "a zone subscription needs \"zoneID\" of a custom zone of the private database") }
            return Subscription(zoneName: zone, recordType: json["recordType"]?.stringValue, subscriptionID: id, notificationInfo: info)
        case "database":
            var s = Subscription.database(recordType: json["recordType"]?.stringValue, subscriptionID: id, notificationInfo: info)
            s.zoneName = zone    // a zone given is refused when the subscription is saved
            return s
        default:
            throw CKError(.invalidArguments, "\"subscriptionType\" must be query or zone (or database, which ckfs adds)")
        }
    }

    private static func notificationInfo(_ json: JSONValue?) throws(CKError) -> NotificationInfo {
        guard let json, json != .null else { return NotificationInfo() }
        guard case .object = json else { throw CKError(.invalidArguments, "\"notificationInfo\" must be an object") }
        var keys: [String]?
        if let raw = json["desiredKeys"], case .array(let items) = raw { keys = items.compactMap(\.stringValue) }
        var info = NotificationInfo(alertBody: json["alertBody"]?.stringValue, title: json["title"]?.stringValue,
                                    soundName: json["soundName"]?.stringValue, category: json["category"]?.stringValue,
                                    shouldBadge: json["shouldBadge"]?.boolValue ?? false,
                                    shouldSendContentAvailable: json["shouldSendContentAvailable"]?.boolValue ?? false,
                                    desiredKeys: keys)
        info.presentation = NotificationPresentation(json: json)
        return info
    }

    /// A subscription error inside a 200.
    static func error(_ error: CKError, subscriptionID: String?) -> JSONValue {
        guard case .object(var o) = error.webServicesDictionary() else { return .null }
        if let subscriptionID { o["subscriptionID"] = .string(subscriptionID) }
        return .object(o)
    }
}
