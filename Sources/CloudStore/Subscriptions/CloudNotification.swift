import Foundation

/// One notification a subscription sent: what changed, why, and what to show.
public struct CloudNotification: Sendable, Equatable {
    public enum Kind: String, Sendable {
        /// A query subscription fired for one record.
        case query
        /// A zone subscription fired for one commit in its zone.
        case recordZone
        /// A database subscription fired for one commit in one of the database's zones.
        case database
    }

    /// Why a query notification was sent (CKQueryNotification.Reason).
    public enum Reason: String, Sendable, CaseIterable {
        case recordCreated, recordUpdated, recordDeleted
    }

    public var notificationID: String
    public var kind: Kind
    public var subscriptionID: String
    public var databaseScope: DatabaseScope
    public var zoneID: ZoneID
    /// The record a query notification is about.
    public var recordID: RecordID?
    public var recordType: String?
    public var reason: Reason?
    /// The subscription's `desiredKeys` fields of the record (as it is after a save, as it was
    /// before a deletion), as many as fit the payload limit.
    public var recordFields: [String: FieldValue] = [:]
    /// Fields were left out to keep the payload within its limit.
    public var isPruned = false
    public var alertBody: String?
    public var title: String?
    public var soundName: String?
    public var category: String?
    public var shouldBadge = false
    public var contentAvailable = false
    /// The alert's other parts, as the subscription gave them.
    public var presentation = NotificationPresentation()
    /// Set when fetched: the notification was marked read.
    public var isRead = false
    /// Set when fetched: the token that goes on after this notification.
    public var token: NotificationToken?
    /// The client (device ID) whose change sent it; that client is not sent its own.
    public var originDeviceID: String
    /// The user whose change sent it.
    public var changedBy: String
    /// Milliseconds since 1970.
    public var time: Int64
    /// The zone's change sequence number of the commit that sent it.
    public var changeSeq: Int64

    /// Bytes a notification's payload may take; past it, fields are left out.
    public static let payloadLimit = 4096

    /// The payload as delivered and stored: compact JSON, one line.
    var json: JSONValue {
        var out: [String: JSONValue] = [
            "notificationID": .string(notificationID),
            "type": .string(kind.rawValue),
            "subscriptionID": .string(subscriptionID),
            "database": .string(databaseScope.rawValue),
            "zoneID": .object(["zoneName": .string(zoneID.zoneName), "ownerName": .string(zoneID.ownerName)]),
            "device": .string(originDeviceID),
            "changedBy": .string(changedBy),
            "time": .int(time),
            "changeSeq": .int(changeSeq),
        ]
        if let recordID { out["recordName"] = .string(recordID.recordName) }
        if let recordType { out["recordType"] = .string(recordType) }
        if let reason { out["reason"] = .string(reason.rawValue) }
        if kind == .query {
            out["fields"] = .object(recordFields.mapValues { RecordCoding.encodeField($0) })
            out["isPruned"] = .bool(isPruned)
        }
        if let alertBody { out["alertBody"] = .string(alertBody) }
        if let title { out["title"] = .string(title) }
        if let soundName { out["soundName"] = .string(soundName) }
        if let category { out["category"] = .string(category) }
        if shouldBadge { out["shouldBadge"] = .bool(true) }
        if contentAvailable { out["contentAvailable"] = .bool(true) }
        presentation.write(into: &out)
        return .object(out)
    }

    /// The notification as `ckfs notifications` prints it: the payload, `isRead`, and the
    /// token to go on from after it.
    public var dictionary: JSONValue {
        guard case .object(var members) = json else { return json }
        members["isRead"] = .bool(isRead)
        if let token { members["token"] = .string(token.text) }
        return .object(members)
    }

    init(json: JSONValue) throws(CKError) {
        func need(_ key: String) throws(CKError) -> String {
            guard let s = json[key]?.stringValue else { throw CKError(.badDatabase, "a notification has no \(key)") }
            return s
        }
        notificationID = try need("notificationID")
        guard let kind = Kind(rawValue: try need("type")) else { throw CKError(.badDatabase, "notification \(notificationID) has an unknown type") }
        self.kind = kind
        subscriptionID = try need("subscriptionID")
        guard let scope = DatabaseScope(rawValue: try need("database")) else { throw CKError(.badDatabase, "notification \(notificationID) has an unknown database") }
        databaseScope = scope
        zoneID = ZoneID(zoneName: json["zoneID"]?["zoneName"]?.stringValue ?? ZoneID.defaultZoneName,
                        ownerName: json["zoneID"]?["ownerName"]?.stringValue ?? "")
        if let name = json["recordName"]?.stringValue { recordID = RecordID(recordName: name, zoneID: zoneID) }
        recordType = json["recordType"]?.stringValue
        reason = json["reason"]?.stringValue.flatMap(Reason.init(rawValue:))
        for (key, raw) in json["fields"]?.objectValue ?? [:] {
            guard let typeName = raw["type"]?.stringValue, let type = FieldType(name: typeName), let value = raw["value"] else { continue }
            recordFields[key] = try? RecordCoding.decodeValue(value, as: type, key: key, fraction: raw["fraction"])
        }
        isPruned = json["isPruned"]?.boolValue ?? false
        alertBody = json["alertBody"]?.stringValue
        title = json["title"]?.stringValue
        soundName = json["soundName"]?.stringValue
        category = json["category"]?.stringValue
        shouldBadge = json["shouldBadge"]?.boolValue ?? false
        contentAvailable = json["contentAvailable"]?.boolValue ?? false
        presentation = NotificationPresentation(json: json)
        originDeviceID = json["device"]?.stringValue ?? ""
        changedBy = json["changedBy"]?.stringValue ?? ""
        time = json["time"]?.int64Value ?? 0
        changeSeq = json["changeSeq"]?.int64Value ?? 0
    }

    init(_ subscription: Subscription, scope: DatabaseScope, zoneID: ZoneID, entry: LogEntry) {
        notificationID = UUID().uuidString
        kind = switch subscription.kind {
        case .query: .query
        case .recordZone: .recordZone
        case .database: .database
        }
        subscriptionID = subscription.subscriptionID
        databaseScope = scope
        self.zoneID = zoneID
        let info = subscription.notificationInfo
        alertBody = info.alertBody
        title = info.title
        soundName = info.soundName
        category = info.category
        shouldBadge = info.shouldBadge
        contentAvailable = info.shouldSendContentAvailable
        presentation = info.presentation
        originDeviceID = entry.deviceID
        changedBy = entry.userRecordName
        time = entry.time
        changeSeq = entry.seq
    }

    /// Adds the `keys` fields of `record` in their order while the payload stays within the
    /// limit; a field that does not fit is left out and `isPruned` set. Encrypted fields are
    /// never carried: the server cannot read them.
    mutating func carry(_ keys: [String], of record: Record) {
        var size = JSONWriter.compact(json).count
        for key in keys where recordFields[key] == nil {
            guard !record.encryptedKeys.contains(key), let value = record.fields[key] else { continue }
            // `"key":value,` — the key's quotes, colon and comma.
            let cost = JSONWriter.compact(.string(key)).count + JSONWriter.compact(RecordCoding.encodeField(value)).count + 2
            if size + cost > Self.payloadLimit {
                isPruned = true
                continue
            }
            recordFields[key] = value
            size += cost
        }
    }
}
