import Foundation
import CloudStore

public typealias CKSubscriptionOptions = SubscriptionOptions

/// What a subscription's notifications show, as CloudKit code sets it: a class whose
/// properties are set one by one. As Apple's (`CKSubscription.NotificationInfo`), an
/// `NSObject` with `NSSecureCoding` and `NSCopying`.
///
/// `@unchecked Sendable`: `lock` guards `value`, its one stored property that changes.
open class CKNotificationInfo: NSObject, NSSecureCoding, NSCopying, @unchecked Sendable {
    private let lock = NSLock()
    private var value: NotificationInfo

    public override init() { value = NotificationInfo() }
    init(_ info: NotificationInfo) { value = info }

    /// Every setting at once, as Apple's Swift initializer takes them.
    public convenience init(alertBody: String? = nil, alertLocalizationKey: String? = nil, alertLocalizationArgs: [CKRecord.FieldKey] = [],
                            title: String? = nil, titleLocalizationKey: String? = nil, titleLocalizationArgs: [CKRecord.FieldKey] = [],
                            subtitle: String? = nil, subtitleLocalizationKey: String? = nil, subtitleLocalizationArgs: [CKRecord.FieldKey] = [],
                            alertActionLocalizationKey: String? = nil, alertLaunchImage: String? = nil, soundName: String? = nil,
                            desiredKeys: [CKRecord.FieldKey] = [], shouldBadge: Bool = false, shouldSendContentAvailable: Bool = false,
                            shouldSendMutableContent: Bool = false, category: String? = nil, collapseIDKey: String? = nil) {
        self.init()
        self.alertBody = alertBody
        self.alertLocalizationKey = alertLocalizationKey
        self.alertLocalizationArgs = alertLocalizationArgs.isEmpty ? nil : alertLocalizationArgs
        self.title = title
        self.titleLocalizationKey = titleLocalizationKey
        self.titleLocalizationArgs = titleLocalizationArgs.isEmpty ? nil : titleLocalizationArgs
        self.subtitle = subtitle
        self.subtitleLocalizationKey = subtitleLocalizationKey
        self.subtitleLocalizationArgs = subtitleLocalizationArgs.isEmpty ? nil : subtitleLocalizationArgs
        self.alertActionLocalizationKey = alertActionLocalizationKey
        self.alertLaunchImage = alertLaunchImage
        self.soundName = soundName
        self.desiredKeys = desiredKeys.isEmpty ? nil : desiredKeys
        self.shouldBadge = shouldBadge
        self.shouldSendContentAvailable = shouldSendContentAvailable
        self.shouldSendMutableContent = shouldSendMutableContent
        self.category = category
        self.collapseIDKey = collapseIDKey
    }

    /// Settings of their own, equal to these.
    open func copy(with zone: NSZone? = nil) -> Any { CKNotificationInfo(info) }

    public class var supportsSecureCoding: Bool { true }

    /// The settings as `subscriptions.json` keeps them.
    open func encode(with coder: NSCoder) {
        coder.encode(JSONWriter.compactString(info.json) as NSString, forKey: "notificationInfo")
    }

    public required init?(coder: NSCoder) {
        guard let text = coder.decodeObject(of: NSString.self, forKey: "notificationInfo") as String?,
              let json = try? JSONParser.parse(text)
        else { return nil }
        value = NotificationInfo(json: json)
    }

    var info: NotificationInfo { lock.withLock { value } }

    private func get<T>(_ key: KeyPath<NotificationInfo, T>) -> T { lock.withLock { value[keyPath: key] } }
    private func set<T>(_ key: WritableKeyPath<NotificationInfo, T>, _ v: T) { lock.withLock { value[keyPath: key] = v } }

    public var alertBody: String? { get { get(\.alertBody) } set { set(\.alertBody, newValue) } }
    public var title: String? { get { get(\.title) } set { set(\.title, newValue) } }
    public var soundName: String? { get { get(\.soundName) } set { set(\.soundName, newValue) } }
    public var category: String? { get { get(\.category) } set { set(\.category, newValue) } }
    public var shouldBadge: Bool { get { get(\.shouldBadge) } set { set(\.shouldBadge, newValue) } }
    public var shouldSendContentAvailable: Bool { get { get(\.shouldSendContentAvailable) } set { set(\.shouldSendContentAvailable, newValue) } }
    public var desiredKeys: [String]? { get { get(\.desiredKeys) } set { set(\.desiredKeys, newValue) } }
    public var alertLocalizationKey: String? { get { get(\.presentation.alertLocalizationKey) } set { set(\.presentation.alertLocalizationKey, newValue) } }
    public var alertLocalizationArgs: [CKRecord.FieldKey]? { get { get(\.presentation.alertLocalizationArgs) } set { set(\.presentation.alertLocalizationArgs, newValue) } }
    public var titleLocalizationKey: String? { get { get(\.presentation.titleLocalizationKey) } set { set(\.presentation.titleLocalizationKey, newValue) } }
    public var titleLocalizationArgs: [CKRecord.FieldKey]? { get { get(\.presentation.titleLocalizationArgs) } set { set(\.presentation.titleLocalizationArgs, newValue) } }
    public var subtitle: String? { get { get(\.presentation.subtitle) } set { set(\.presentation.subtitle, newValue) } }
    public var subtitleLocalizationKey: String? { get { get(\.presentation.subtitleLocalizationKey) } set { set(\.presentation.subtitleLocalizationKey, newValue) } }
    public var subtitleLocalizationArgs: [CKRecord.FieldKey]? { get { get(\.presentation.subtitleLocalizationArgs) } set { set(\.presentation.subtitleLocalizationArgs, newValue) } }
    public var alertActionLocalizationKey: String? { get { get(\.presentation.alertActionLocalizationKey) } set { set(\.presentation.alertActionLocalizationKey, newValue) } }
    public var alertLaunchImage: String? { get { get(\.presentation.alertLaunchImage) } set { set(\.presentation.alertLaunchImage, newValue) } }
    public var shouldSendMutableContent: Bool { get { get(\.presentation.shouldSendMutableContent) } set { set(\.presentation.shouldSendMutableContent, newValue) } }
    public var collapseIDKey: String? { get { get(\.presentation.collapseIDKey) } set { set(\.presentation.collapseIDKey, newValue) } }
}

/// A subscription as CloudKit code makes it, with the seed's initializers: by record
/// type and predicate, or by zone, each with or without an ID (a UUID when none is given).
/// ``CKQuerySubscription`` and ``CKRecordZoneSubscription`` are the newer names. As Apple's,
/// an `NSObject` with `NSSecureCoding` and `NSCopying`.
///
/// `@unchecked Sendable`: `lock` guards `value` and `info`, the stored properties that change.
open class CKSubscription: NSObject, NSSecureCoding, NSCopying, @unchecked Sendable {
    public typealias ID = String
    public typealias NotificationInfo = CKNotificationInfo

    public enum SubscriptionType: Int, Sendable {
        case query = 1
        case recordZone = 2
        case database = 3
    }

    /// Guards `value` and `info`; fileprivate for the subclasses' setters.
    fileprivate let lock = NSLock()
    fileprivate var value: Subscription
    private var info: CKNotificationInfo?
    /// Why the predicate given could not be read: saving the subscription fails with it.
    private let predicateError: CKError?
    /// The predicate as the caller wrote it, when they gave one (its format is theirs).
    private let givenPredicate: NSPredicate?

    public convenience init(recordType: CKRecord.RecordType, predicate: QueryPredicate, options: CKSubscriptionOptions) {
        self.init(recordType: recordType, predicate: predicate, subscriptionID: UUID().uuidString, options: options)
    }

    public init(recordType: CKRecord.RecordType, predicate: QueryPredicate, subscriptionID: ID, options: CKSubscriptionOptions) {
        value = Subscription(recordType: recordType, predicate: predicate, subscriptionID: subscriptionID, options: options)
        predicateError = nil
        givenPredicate = nil
    }

    /// A query subscription with the predicate as CloudKit code writes it; one that does not
    /// parse makes the save fail with `invalidArguments`.
    public init(recordType: CKRecord.RecordType, predicate: NSPredicate, subscriptionID: ID, options: CKSubscriptionOptions) {
        var parsed = QueryPredicate.all
        do throws(CKError) {
            parsed = try predicate.cloudKitQueryPredicate()
            predicateError = nil
        } catch {
            predicateError = error
        }
        givenPredicate = predicate
        value = Subscription(recordType: recordType, predicate: parsed, subscriptionID: subscriptionID, options: options)
    }

    /// A zone subscription; `options` must be empty.
    public convenience init(zoneID: CKRecordZone.ID, options: CKSubscriptionOptions) {
        self.init(zoneID: zoneID, subscriptionID: UUID().uuidString, options: options)
    }

    public init(zoneID: CKRecordZone.ID, subscriptionID: ID, options: CKSubscriptionOptions) {
        value = Subscription(zoneName: zoneID.zoneName, subscriptionID: subscriptionID, options: options)
        predicateError = nil
        givenPredicate = nil
    }

    init(_ subscription: Subscription) {
        value = subscription
        info = CKNotificationInfo(subscription.notificationInfo)
        predicateError = nil
        givenPredicate = nil
    }

    /// The engine's value, with the notification info as set now; fails when the predicate
    /// given could not be read.
    func engineValue() throws(CKError) -> Subscription {
        if let predicateError { throw predicateError }
        return lock.withLock {
            var s = value
            s.notificationInfo = info?.info ?? .init()
            return s
        }
    }

    public var subscriptionID: ID { lock.withLock { value.subscriptionID } }
    public var subscriptionType: SubscriptionType {
        lock.withLock {
            switch value.kind {
            case .query: .query
            case .recordZone: .recordZone
            case .database: .database
            }
        }
    }
    public var subscriptionOptions: CKSubscriptionOptions { lock.withLock { value.options } }
    public var recordType: CKRecord.RecordType? { lock.withLock { value.recordType } }
    /// A query subscription's predicate (`NSPredicate` in the `CloudKit` module): the one
    /// given, or for a fetched subscription the stored one, in CloudKit's predicate language.
    public var predicate: NSPredicate? {
        guard let stored = lock.withLock({ value.predicate }) else { return nil }
        return givenPredicate ?? CloudKitPredicate(stored)
    }

    /// The zone watched; nil for every zone (a query subscription's) or none (a database
    /// subscription's). Apple declares it on the subclasses, each with its own optionality.
    var watchedZoneID: CKRecordZone.ID? {
        get { lock.withLock { value.zoneName.map { CKRecordZone.ID(zoneName: $0) } } }
        set { lock.withLock { value.zoneName = newValue?.zoneName } }
    }

    public var notificationInfo: CKNotificationInfo? {
        get { lock.withLock { info } }
        set { lock.withLock { info = newValue } }
    }

    open override var description: String { "<CKSubscription \(subscriptionID)>" }

    /// A subscription of its own with the same settings, made by archiving this one: the
    /// archive keeps everything a subscription holds, whichever subclass it is.
    open func copy(with zone: NSZone? = nil) -> Any {
        guard let data = try? NSKeyedArchiver.archivedData(withRootObject: self, requiringSecureCoding: true),
              let copy = try? NSKeyedUnarchiver.unarchivedObject(ofClass: CKSubscription.self, from: data)
        else { return self }
        return copy
    }

    public class var supportsSecureCoding: Bool { true }

    /// The subscription as `subscriptions.json` keeps it, with the notification info, the
    /// predicate as the caller gave it and why it was refused, if it was.
    open func encode(with coder: NSCoder) {
        let (stored, info) = lock.withLock { (self.value, self.info) }
        coder.encode(JSONWriter.compactString(stored.json(ownerName: CKCurrentUserDefaultName)) as NSString, forKey: "subscription")
        if let info { coder.encode(info, forKey: "notificationInfo") }
        if let givenPredicate { coder.encode(givenPredicate.archivable, forKey: "predicate") }
        if let predicateError { coder.encode(predicateError.message as NSString, forKey: "refusal") }
    }

    public required init?(coder: NSCoder) {
        guard let text = coder.decodeObject(of: NSString.self, forKey: "subscription") as String?,
              let json = try? JSONParser.parse(text),
              let subscription = try? Subscription(json: json, file: "an archived subscription")
        else { return nil }
        value = subscription
        info = coder.decodeObjectIfPresent(of: CKNotificationInfo.self, forKey: "notificationInfo")
        givenPredicate = coder.decodeObjectIfPresent(of: [CloudKitPredicate.self, CloudKitCompoundPredicate.self], forKey: "predicate") as? NSPredicate
        predicateError = coder.decodeStringIfPresent(forKey: "refusal").map { CKError(.invalidArguments, $0) }
    }

    static func wrap(_ s: Subscription) -> CKSubscription {
        switch s.kind {
        case .query: CKQuerySubscription(s)
        case .recordZone: CKRecordZoneSubscription(s)
        case .database: CKDatabaseSubscription(s)
        }
    }
}

/// A subscription to records of a type that match a predicate.
///
/// `@unchecked Sendable`: it adds no state; ``CKSubscription``'s lock guards what it has.
open class CKQuerySubscription: CKSubscription, @unchecked Sendable {
    public typealias Options = CKSubscriptionOptions

    // The options default to Apple's: fire on creation, update and deletion.

    public convenience init(recordType: CKRecord.RecordType, predicate: QueryPredicate, options: Options = [.firesOnRecordCreation, .firesOnRecordUpdate, .firesOnRecordDeletion]) {
        self.init(recordType: recordType, predicate: predicate, subscriptionID: UUID().uuidString, options: options)
    }

    public override init(recordType: CKRecord.RecordType, predicate: QueryPredicate, subscriptionID: ID, options: Options = [.firesOnRecordCreation, .firesOnRecordUpdate, .firesOnRecordDeletion]) {
        super.init(recordType: recordType, predicate: predicate, subscriptionID: subscriptionID, options: options)
    }

    public convenience init(recordType: CKRecord.RecordType, predicate: NSPredicate, options: Options = [.firesOnRecordCreation, .firesOnRecordUpdate, .firesOnRecordDeletion]) {
        self.init(recordType: recordType, predicate: predicate, subscriptionID: UUID().uuidString, options: options)
    }

    public override init(recordType: CKRecord.RecordType, predicate: NSPredicate, subscriptionID: ID, options: Options = [.firesOnRecordCreation, .firesOnRecordUpdate, .firesOnRecordDeletion]) {
        super.init(recordType: recordType, predicate: predicate, subscriptionID: subscriptionID, options: options)
    }

    /// The predicate, as Apple declares it here: never nil.
    public override var predicate: NSPredicate { super.predicate ?? CloudKitPredicate(value: true) }

    override init(_ subscription: Subscription) { super.init(subscription) }

    public required init?(coder: NSCoder) { super.init(coder: coder) }

    public var querySubscriptionOptions: Options { subscriptionOptions }

    /// The zone whose records the subscription watches; nil watches every zone.
    public var zoneID: CKRecordZone.ID? {
        get { watchedZoneID }
        set { watchedZoneID = newValue }
    }
}

/// A subscription to every change in every zone of the private database: sync code saves one
/// and, on each notification, fetches the database's changes.
/// `@unchecked Sendable`: it adds no state; ``CKSubscription``'s lock guards what it has.
open class CKDatabaseSubscription: CKSubscription, @unchecked Sendable {
    public convenience init() { self.init(subscriptionID: UUID().uuidString) }

    public init(subscriptionID: ID) {
        super.init(Subscription.database(subscriptionID: subscriptionID))
    }

    override init(_ subscription: Subscription) { super.init(subscription) }

    public required init?(coder: NSCoder) { super.init(coder: coder) }

    /// When set, the subscription fires only for changes to records of this type (and for
    /// zones created or deleted).
    public override var recordType: CKRecord.RecordType? {
        get { lock.withLock { value.recordType } }
        set { lock.withLock { value.kind = .database(recordType: newValue) } }
    }
}

/// A subscription to every change in one custom zone.
///
/// `@unchecked Sendable`: it adds no state; ``CKSubscription``'s lock guards what it has.
open class CKRecordZoneSubscription: CKSubscription, @unchecked Sendable {
    public convenience init(zoneID: CKRecordZone.ID) { self.init(zoneID: zoneID, subscriptionID: UUID().uuidString) }

    public init(zoneID: CKRecordZone.ID, subscriptionID: ID) {
        super.init(zoneID: zoneID, subscriptionID: subscriptionID, options: [])
    }

    override init(_ subscription: Subscription) { super.init(subscription) }

    public required init?(coder: NSCoder) { super.init(coder: coder) }

    /// The zone the subscription watches.
    public var zoneID: CKRecordZone.ID { watchedZoneID ?? .default }

    /// When set, the subscription fires only for changes to records of this type.
    public override var recordType: CKRecord.RecordType? {
        get { lock.withLock { value.recordType } }
        set { lock.withLock { value.kind = .recordZone(recordType: newValue) } }
    }
}

// MARK: Saving, fetching and deleting

extension CKDatabase {
    public func save(_ subscription: CKSubscription) async throws -> CKSubscription {
        CKSubscription.wrap(try subscriptionEngine().saveSubscription(subscription.engineValue()))
    }

    public func subscription(for id: CKSubscription.ID) async throws -> CKSubscription {
        CKSubscription.wrap(try subscriptionEngine().subscription(id))
    }

    public func allSubscriptions() async throws -> [CKSubscription] {
        try subscriptionEngine().subscriptions().map(CKSubscription.wrap)
    }

    @discardableResult
    public func deleteSubscription(withID id: CKSubscription.ID) async throws -> CKSubscription.ID {
        try subscriptionEngine().deleteSubscription(id)
        return id
    }

    public func modifySubscriptions(saving: [CKSubscription], deleting: [CKSubscription.ID]) async throws
        -> (saveResults: [CKSubscription.ID: Result<CKSubscription, Error>], deleteResults: [CKSubscription.ID: Result<Void, Error>]) {
        let result = try subscriptionEngine().modifySubscriptions(saving: saving.map { (s) throws(CKError) in try s.engineValue() }, deleting: deleting)
        var saves: [CKSubscription.ID: Result<CKSubscription, Error>] = [:]
        for (id, r) in result.saved { saves[id] = r.map(CKSubscription.wrap).mapError { $0 } }
        var deletes: [CKSubscription.ID: Result<Void, Error>] = [:]
        for (id, r) in result.deleted { deletes[id] = r.mapError { $0 } }
        return (saves, deletes)
    }

    public func save(_ subscription: CKSubscription, completionHandler: @escaping @Sendable (CKSubscription?, Error?) -> Void) {
        container.complete(completionHandler) { () throws(CKError) in CKSubscription.wrap(try self.subscriptionEngine().saveSubscription(subscription.engineValue())) }
    }

    public func fetch(withSubscriptionID id: CKSubscription.ID, completionHandler: @escaping @Sendable (CKSubscription?, Error?) -> Void) {
        container.complete(completionHandler) { () throws(CKError) in CKSubscription.wrap(try self.subscriptionEngine().subscription(id)) }
    }

    public func fetchAllSubscriptions(completionHandler: @escaping @Sendable ([CKSubscription]?, Error?) -> Void) {
        container.complete(completionHandler) { () throws(CKError) in try self.subscriptionEngine().subscriptions().map(CKSubscription.wrap) }
    }

    public func delete(withSubscriptionID id: CKSubscription.ID, completionHandler: @escaping @Sendable (CKSubscription.ID?, Error?) -> Void) {
        container.complete(completionHandler) { () throws(CKError) in
            try self.subscriptionEngine().deleteSubscription(id)
            return id
        }
    }
}

/// Saves and deletes subscriptions, each on its own.
open class CKModifySubscriptionsOperation: CKDatabaseOperation, @unchecked Sendable {
    public var subscriptionsToSave: [CKSubscription]?
    public var subscriptionIDsToDelete: [CKSubscription.ID]?
    public var perSubscriptionSaveBlock: ((CKSubscription.ID, Result<CKSubscription, Error>) -> Void)?
    public var perSubscriptionDeleteBlock: ((CKSubscription.ID, Result<Void, Error>) -> Void)?
    /// The older form of ``modifySubscriptionsResultBlock``.
    public var modifySubscriptionsCompletionBlock: (([CKSubscription]?, [CKSubscription.ID]?, Error?) -> Void)?
    /// The end of the operation: a failure only when the whole operation failed.
    public var modifySubscriptionsResultBlock: ((Result<Void, Error>) -> Void)?

    public init(subscriptionsToSave: [CKSubscription]? = nil, subscriptionIDsToDelete: [CKSubscription.ID]? = nil) {
        self.subscriptionsToSave = subscriptionsToSave
        self.subscriptionIDsToDelete = subscriptionIDsToDelete
    }

    open override func main() {
        do throws(CKError) {
            let database = targetDatabase
            if isCancelled { throw CKError(.operationCancelled, "the operation was cancelled; nothing was saved or deleted") }
            let result = try database.subscriptionEngine().modifySubscriptions(saving: (subscriptionsToSave ?? []).map { (s) throws(CKError) in try s.engineValue() },
                                                                   deleting: subscriptionIDsToDelete ?? [])
            var saved: [CKSubscription] = []
            var deleted: [CKSubscription.ID] = []
            var errors: [CKItemID: CKError] = [:]
            for (id, r) in result.saved {
                switch r {
                case .success(let s):
                    saved.append(CKSubscription.wrap(s))
                    perSubscriptionSaveBlock?(id, .success(saved.last!))
                case .failure(let e):
                    errors[.subscription(id)] = e
                    perSubscriptionSaveBlock?(id, .failure(e))
                }
            }
            for (id, r) in result.deleted {
                if case .failure(let e) = r { errors[.subscription(id)] = e } else { deleted.append(id) }
                perSubscriptionDeleteBlock?(id, r.mapError { $0 })
            }
            modifySubscriptionsCompletionBlock?(saved, deleted, CKError.partialFailure(errors, "\(errors.count) of \(result.saved.count + result.deleted.count) subscriptions failed"))
            modifySubscriptionsResultBlock?(.success(()))
        } catch {
            modifySubscriptionsCompletionBlock?(nil, nil, error)
            modifySubscriptionsResultBlock?(.failure(error))
        }
    }
}

/// Fetches subscriptions by ID, or all of the caller's.
open class CKFetchSubscriptionsOperation: CKDatabaseOperation, @unchecked Sendable {
    public var subscriptionIDs: [CKSubscription.ID]?
    public var perSubscriptionResultBlock: ((CKSubscription.ID, Result<CKSubscription, Error>) -> Void)?
    /// The older form of ``fetchSubscriptionsResultBlock``.
    public var fetchSubscriptionCompletionBlock: (([CKSubscription.ID: CKSubscription]?, Error?) -> Void)?
    /// The end of the operation: a failure only when the whole operation failed.
    public var fetchSubscriptionsResultBlock: ((Result<Void, Error>) -> Void)?

    public required init(subscriptionIDs: [CKSubscription.ID]? = nil) { self.subscriptionIDs = subscriptionIDs }

    /// An operation that fetches every subscription of the database.
    open class func fetchAllSubscriptionsOperation() -> Self { Self(subscriptionIDs: nil) }

    open override func main() {
        do throws(CKError) {
            if isCancelled { throw CKError(.operationCancelled, "the operation was cancelled") }
            let database = targetDatabase
            let all = try database.subscriptionEngine().subscriptions()
            var found: [CKSubscription.ID: CKSubscription] = [:]
            var errors: [CKItemID: CKError] = [:]
            for id in subscriptionIDs ?? all.map(\.subscriptionID) {
                if let s = all.first(where: { $0.subscriptionID == id }) {
                    found[id] = CKSubscription.wrap(s)
                    perSubscriptionResultBlock?(id, .success(found[id]!))
                } else {
                    let e = CKError(.unknownItem, "no subscription \(id) in your \(database.scope.rawValue) database")
                    errors[.subscription(id)] = e
                    perSubscriptionResultBlock?(id, .failure(e))
                }
            }
            fetchSubscriptionCompletionBlock?(found, CKError.partialFailure(errors, "\(errors.count) subscriptions could not be fetched"))
            fetchSubscriptionsResultBlock?(.success(()))
        } catch {
            fetchSubscriptionCompletionBlock?(nil, error)
            fetchSubscriptionsResultBlock?(.failure(error))
        }
    }
}
