import Foundation
import CloudStore

/// A notification as CloudKit code reads it: ``CKQueryNotification`` for a query
/// subscription, ``CKRecordZoneNotification`` for a zone one, ``CKDatabaseNotification`` for a
/// database one. An `NSObject`, as Apple's.
///
/// `@unchecked Sendable`: immutable; its stored properties are `let`s, as are its subclasses'.
open class CKNotification: NSObject, @unchecked Sendable {
    /// A notification's ID (``CKNotificationID``).
    public typealias ID = CKNotificationID

    public enum NotificationType: Int, Sendable {
        case query = 1
        case recordZone = 2
        case readNotification = 3
        case database = 4
    }

    let value: CloudNotification
    public let containerIdentifier: String?
    /// The user whose subscription sent the notification: the user who receives it (nil when
    /// read from a push's payload, which does not say).
    public let subscriptionOwnerUserRecordID: CKRecord.ID?

    init(_ value: CloudNotification, containerIdentifier: String?, owner: CKRecord.ID?) {
        self.value = value
        self.containerIdentifier = containerIdentifier
        subscriptionOwnerUserRecordID = owner
    }

    static func wrap(_ n: CloudNotification, containerIdentifier: String?, owner: CKRecord.ID? = nil) -> CKNotification {
        switch n.kind {
        case .query: CKQueryNotification(n, containerIdentifier: containerIdentifier, owner: owner)
        case .recordZone: CKRecordZoneNotification(n, containerIdentifier: containerIdentifier, owner: owner)
        case .database: CKDatabaseNotification(n, containerIdentifier: containerIdentifier, owner: owner)
        }
    }

    public var notificationID: ID? { ID(value.notificationID) }
    public var notificationType: NotificationType {
        switch value.kind {
        case .query: .query
        case .recordZone: .recordZone
        case .database: .database
        }
    }
    public var subscriptionID: CKSubscription.ID? { value.subscriptionID }
    /// Fields were left out to keep the payload within 4 KB.
    public var isPruned: Bool { value.isPruned }
    public var alertBody: String? { value.alertBody }
    public var title: String? { value.title }
    public var soundName: String? { value.soundName }
    public var category: String? { value.category }
    public var shouldBadge: Bool { value.shouldBadge }
    /// The badge count the notification asks for: 1 when its subscription badges.
    public var badge: NSNumber? { value.shouldBadge ? NSNumber(value: 1) : nil }
    public var alertLocalizationKey: String? { value.presentation.alertLocalizationKey }
    public var alertLocalizationArgs: [String]? { value.presentation.alertLocalizationArgs }
    public var titleLocalizationKey: String? { value.presentation.titleLocalizationKey }
    public var titleLocalizationArgs: [String]? { value.presentation.titleLocalizationArgs }
    public var subtitle: String? { value.presentation.subtitle }
    public var subtitleLocalizationKey: String? { value.presentation.subtitleLocalizationKey }
    public var subtitleLocalizationArgs: [String]? { value.presentation.subtitleLocalizationArgs }
    public var alertActionLocalizationKey: String? { value.presentation.alertActionLocalizationKey }
    public var alertLaunchImage: String? { value.presentation.alertLaunchImage }
    public var isRead: Bool { value.isRead }
    open override var description: String { "<CKNotification \(value.notificationID) \(value.subscriptionID)>" }
}

/// A query subscription fired for one record.
open class CKQueryNotification: CKNotification, @unchecked Sendable {
    public enum Reason: Int, Sendable {
        case recordCreated = 1, recordUpdated, recordDeleted
    }

    public var queryNotificationReason: Reason {
        switch value.reason {
        case .recordUpdated?: .recordUpdated
        case .recordDeleted?: .recordDeleted
        default: .recordCreated
        }
    }

    /// The record, in its zone as the caller writes it (owned by `CKCurrentUserDefaultName`), as
    /// every other result names records.
    public var recordID: CKRecord.ID? {
        value.recordID.map { CKRecord.ID(recordName: $0.recordName, zoneID: CKRecordZone.ID($0.zoneID.asCallerWritesIt)) }
    }
    /// The subscription's desired keys of the record, as many as fit, as the record's
    /// subscript gives them (`String`, `Int`, `Double`, `Date`, …). An asset is left out: a
    /// notification carries no file to point at; fetch the record for it.
    public var recordFields: [String: Any]? {
        let fields = value.recordFields.compactMapValues { (field) -> Any? in
            if case .asset = field { return nil }
            return field.swiftValue { _ in URL(fileURLWithPath: "/dev/null") }
        }
        return fields.isEmpty ? nil : fields
    }
    public var databaseScope: CKDatabase.Scope { CKDatabase.Scope(value.databaseScope) }
}

/// A zone subscription fired for one commit in its zone.
open class CKRecordZoneNotification: CKNotification, @unchecked Sendable {
    public var recordZoneID: CKRecordZone.ID? { CKRecordZone.ID(value.zoneID.asCallerWritesIt) }
    public var databaseScope: CKDatabase.Scope { CKDatabase.Scope(value.databaseScope) }
}

/// A database subscription fired for one commit in one of the database's zones: fetch the
/// database's changes (``CKFetchDatabaseChangesOperation``) to learn which.
/// `@unchecked Sendable`: immutable, as every ``CKNotification``.
open class CKDatabaseNotification: CKNotification, @unchecked Sendable {
    public var databaseScope: CKDatabase.Scope { CKDatabase.Scope(value.databaseScope) }
}

public typealias CKNotificationToken = NotificationToken

extension CKContainer {
    /// The caller's notifications log.
    func notificationLog() throws(CKError) -> any NotificationStorage {
        try engine().notificationLog(caller: caller, environment: environment)
    }

    /// Notifications since `token` (nil: all kept), without those of this client's own
    /// changes, and the token to go on from.
    public func notificationChanges(since token: CKNotificationToken? = nil) throws(CKError) -> (notifications: [CKNotification], token: CKNotificationToken, badge: Int) {
        let changes = try notificationLog().changes(since: token, excludingDevice: caller.deviceID)
        let owner = try? callerRecordID()
        return (changes.notifications.map { CKNotification.wrap($0, containerIdentifier: containerIdentifier, owner: owner) }, changes.token, changes.badge)
    }

    /// Notifications as they come, as a device receives pushes: those after `token` first,
    /// then each new one, looking every `interval` seconds. Ends when the task is cancelled.
    public func notifications(since token: CKNotificationToken? = nil, interval: Double = 0.05) -> AsyncThrowingStream<CKNotification, Error> {
        AsyncThrowingStream { continuation in
            let task = Task {
                do {
                    var follower = try self.notificationLog().follow(since: token, excludingDevice: self.caller.deviceID)
                    let owner = try? self.callerRecordID()
                    while !Task.isCancelled {
                        for n in try follower.poll() { continuation.yield(CKNotification.wrap(n, containerIdentifier: self.containerIdentifier, owner: owner)) }
                        try await Task.sleep(nanoseconds: UInt64(interval * 1e9))
                    }
                    continuation.finish()
                } catch {
                    continuation.finish(throwing: error is CancellationError ? nil : error)
                }
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }
}

/// Fetches the caller's notifications since a token.
/// Apple's tokens here are ``CKServerChangeToken``s, as for zones and databases, so they
/// archive alike; each kind is refused where another is asked for.
open class CKFetchNotificationChangesOperation: CKDatabaseOperation, @unchecked Sendable {
    public var previousServerChangeToken: CKServerChangeToken?
    public var resultsLimit = 0
    public var notificationChangedBlock: ((CKNotification) -> Void)?
    public var fetchNotificationChangesCompletionBlock: ((CKServerChangeToken?, Error?) -> Void)?
    /// Set when done: more notifications remain past `resultsLimit`.
    public var moreComing: Bool { lock.withLock { more } }
    /// Guarded by `lock`.
    private var more = false

    public init(previousServerChangeToken: CKServerChangeToken? = nil) { self.previousServerChangeToken = previousServerChangeToken }

    open override func main() {
        do throws(CKError) {
            if isCancelled { throw CKError(.operationCancelled, "the operation was cancelled") }
            let database = targetDatabase
            let container = database.container
            var since: CKNotificationToken?
            if let previousServerChangeToken {
                guard let token = previousServerChangeToken.notificationToken else {
                    throw CKError(.invalidArguments, "\(previousServerChangeToken) is not a notifications token; pass the token this operation gave, or nil for every notification kept")
                }
                since = token
            }
            let changes = try container.notificationLog().changes(since: since, excludingDevice: container.caller.deviceID)
            var token = changes.token
            var list = changes.notifications
            if resultsLimit > 0 && list.count > resultsLimit {
                list = Array(list.prefix(resultsLimit))
                token = list.last?.token ?? token
                lock.withLock { more = true }
            }
            let owner = try? container.callerRecordID()
            for n in list { notificationChangedBlock?(CKNotification.wrap(n, containerIdentifier: container.containerIdentifier, owner: owner)) }
            fetchNotificationChangesCompletionBlock?(CKServerChangeToken(notifications: token), nil)
        } catch {
            fetchNotificationChangesCompletionBlock?(nil, error)
        }
    }
}

/// Marks notifications read.
open class CKMarkNotificationsReadOperation: CKDatabaseOperation, @unchecked Sendable {
    public var notificationIDs: [CKNotification.ID]?
    public var markNotificationsReadCompletionBlock: (([CKNotification.ID]?, Error?) -> Void)?

    public override init() {}
    public init(notificationIDsToMarkRead: [CKNotification.ID]) { notificationIDs = notificationIDsToMarkRead }

    open override func main() {
        do throws(CKError) {
            if isCancelled { throw CKError(.operationCancelled, "the operation was cancelled; no notification was marked read") }
            let database = targetDatabase
            let ids = notificationIDs ?? []
            try database.container.notificationLog().markRead(ids.map(\.rawValue))
            markNotificationsReadCompletionBlock?(ids, nil)
        } catch {
            markNotificationsReadCompletionBlock?(nil, error)
        }
    }
}

extension CKDatabase.Scope {
    init(_ scope: DatabaseScope) {
        switch scope {
        case .public: self = .public
        case .private: self = .private
        case .shared: self = .shared
        }
    }
}

/// Sets the app's badge (deprecated by Apple, which says it no longer works): there is no badge
/// on a local store, so it changes nothing and completes with no error, as code that resets
/// the badge at launch expects.
open class CKModifyBadgeOperation: CKOperation, @unchecked Sendable {
    public var badgeValue = 0
    public var modifyBadgeCompletionBlock: ((Error?) -> Void)?

    public override init() {}
    public init(badgeValue: Int) { self.badgeValue = badgeValue }

    open override func main() {
        modifyBadgeCompletionBlock?(isCancelled ? CKError(.operationCancelled, "the operation was cancelled") : nil)
    }
}
