import Foundation

/// When a query subscription fires. A zone subscription takes none.
public struct SubscriptionOptions: OptionSet, Sendable, Hashable {
    public let rawValue: UInt
    public init(rawValue: UInt) { self.rawValue = rawValue }

    public static let firesOnRecordCreation = SubscriptionOptions(rawValue: 1 << 0)
    public static let firesOnRecordUpdate = SubscriptionOptions(rawValue: 1 << 1)
    public static let firesOnRecordDeletion = SubscriptionOptions(rawValue: 1 << 2)
    /// The subscription is deleted after its first notification.
    public static let firesOnce = SubscriptionOptions(rawValue: 1 << 3)

    /// CloudKit Web Services' names of the three triggers, as stored (`firesOn`).
    static let triggerNames: [(SubscriptionOptions, String)] = [
        (.firesOnRecordCreation, "create"), (.firesOnRecordUpdate, "update"), (.firesOnRecordDeletion, "delete"),
    ]
    static let triggers: SubscriptionOptions = [.firesOnRecordCreation, .firesOnRecordUpdate, .firesOnRecordDeletion]
}

/// What a notification shows: the alert, sound and badge a device would present, and
/// the record fields it carries.
public struct NotificationInfo: Sendable, Equatable {
    public var alertBody: String?
    public var title: String?
    public var soundName: String?
    public var category: String?
    /// Count the notification in the user's badge (the number of unread badge notifications).
    public var shouldBadge = false
    public var shouldSendContentAvailable = false
    /// Fields of the record a query notification carries, within the payload limit.
    public var desiredKeys: [String]?
    /// The alert's other parts: localization keys and arguments, subtitle, and the rest.
    public var presentation = NotificationPresentation()

    public init(alertBody: String? = nil, title: String? = nil, soundName: String? = nil, category: String? = nil,
                shouldBadge: Bool = false, shouldSendContentAvailable: Bool = false, desiredKeys: [String]? = nil) {
        self.alertBody = alertBody
        self.title = title
        self.soundName = soundName
        self.category = category
        self.shouldBadge = shouldBadge
        self.shouldSendContentAvailable = shouldSendContentAvailable
        self.desiredKeys = desiredKeys
    }
}

/// A saved wish to hear about changes: a query subscription (a record type and a
/// predicate, in one zone or all), a zone subscription (every change in one zone), or a
/// database subscription (every change in every zone of the private database). A zone or
/// database subscription with a record type hears only of changes to records of that type
/// (and, a database one, of zones created or deleted).
public struct Subscription: Sendable, Equatable {
    public enum Kind: Sendable, Equatable {
        case query(recordType: String, predicate: QueryPredicate)
        case recordZone(recordType: String?)
        case database(recordType: String?)

        /// A database subscription's kind.
        public var isDatabase: Bool { if case .database = self { true } else { false } }
    }

    public var subscriptionID: String
    public var kind: Kind
    public var options: SubscriptionOptions
    /// The zone watched: required for a zone subscription, optional for a query one.
    public var zoneName: String?
    public var notificationInfo: NotificationInfo
    /// The user the subscription belongs to and notifies; set when saved.
    public internal(set) var ownerUserRecordName = ""
    /// Milliseconds since 1970; set when saved.
    public internal(set) var created: Int64 = 0

    /// A query subscription; a UUID-based ID is made when none is given.
    public init(recordType: String, predicate: QueryPredicate = .all, subscriptionID: String? = nil,
                options: SubscriptionOptions, zoneName: String? = nil, notificationInfo: NotificationInfo = NotificationInfo()) {
        self.subscriptionID = subscriptionID ?? UUID().uuidString
        self.kind = .query(recordType: recordType, predicate: predicate)
        self.options = options
        self.zoneName = zoneName
        self.notificationInfo = notificationInfo
    }

    /// A zone subscription, to records of `recordType` only when one is given; its options
    /// must be empty.
    public init(zoneName: String, recordType: String? = nil, subscriptionID: String? = nil, options: SubscriptionOptions = [],
                notificationInfo: NotificationInfo = NotificationInfo()) {
        self.subscriptionID = subscriptionID ?? UUID().uuidString
        self.kind = .recordZone(recordType: recordType)
        self.options = options
        self.zoneName = zoneName
        self.notificationInfo = notificationInfo
    }

    /// A database subscription: one notification for each commit in any zone (that changes
    /// records of `recordType`, when one is given).
    public static func database(recordType: String? = nil, subscriptionID: String? = nil,
                                notificationInfo: NotificationInfo = NotificationInfo()) -> Subscription {
        var s = Subscription(zoneName: "", subscriptionID: subscriptionID, notificationInfo: notificationInfo)
        s.kind = .database(recordType: recordType)
        s.zoneName = nil
        return s
    }

    /// The record type a query subscription queries, or a zone or database one is limited to.
    public var recordType: String? {
        switch kind {
        case .query(let t, _): t
        case .recordZone(let t), .database(let t): t
        }
    }
    public var predicate: QueryPredicate? { if case .query(_, let p) = kind { p } else { nil } }
}
