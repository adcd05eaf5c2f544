import Foundation
import CloudStore

/// What to fetch of one zone: Apple's `CKFetchRecordZoneChangesOperation.ZoneConfiguration`,
/// declared at the top level under its Objective-C name for the archiver, as ``CKRecordID``
/// is. An `NSObject` with `NSSecureCoding` and `NSCopying`, as Apple's.
/// `@unchecked Sendable`: its values are in a `LockedSettings`.
public final class CKFetchRecordZoneChangesConfiguration: NSObject, NSSecureCoding, NSCopying, @unchecked Sendable {
    private struct Values {
        var token: CKServerChangeToken?
        var resultsLimit: Int
        var desiredKeys: [CKRecord.FieldKey]?
    }

    private let values: LockedSettings<Values>

    /// `resultsLimit` nil or 0: the store's page.
    public init(previousServerChangeToken: CKServerChangeToken? = nil, resultsLimit: Int? = nil, desiredKeys: [CKRecord.FieldKey]? = nil) {
        values = LockedSettings(Values(token: previousServerChangeToken, resultsLimit: resultsLimit ?? 0, desiredKeys: desiredKeys))
    }

    public var previousServerChangeToken: CKServerChangeToken? { get { values[\.token] } set { values[\.token] = newValue } }
    /// At most this many records a page (0: the store's page).
    public var resultsLimit: Int { get { values[\.resultsLimit] } set { values[\.resultsLimit] = newValue } }
    public var desiredKeys: [CKRecord.FieldKey]? { get { values[\.desiredKeys] } set { values[\.desiredKeys] = newValue } }

    /// A configuration of its own, with the same settings.
    public func copy(with zone: NSZone? = nil) -> Any {
        let all = values.all
        return CKFetchRecordZoneChangesConfiguration(previousServerChangeToken: all.token, resultsLimit: all.resultsLimit, desiredKeys: all.desiredKeys)
    }

    public static var supportsSecureCoding: Bool { true }

    public func encode(with coder: NSCoder) {
        let all = values.all
        if let token = all.token { coder.encode(token, forKey: "previousServerChangeToken") }
        coder.encode(all.resultsLimit, forKey: "resultsLimit")
        if let keys = all.desiredKeys { coder.encode(NSArray(array: keys.map { $0 as NSString }), forKey: "desiredKeys") }
    }

    public init?(coder: NSCoder) {
        values = LockedSettings(Values(token: coder.decodeObjectIfPresent(of: CKServerChangeToken.self, forKey: "previousServerChangeToken"),
                                       resultsLimit: coder.decodeInteger(forKey: "resultsLimit"),
                                       desiredKeys: coder.decodeObjectIfPresent(of: [NSArray.self, NSString.self], forKey: "desiredKeys") as? [String]))
    }
}

/// Apple's older form of ``CKFetchRecordZoneChangesConfiguration`` (`ZoneOptions`), the same
/// three settings. `@unchecked Sendable`: it holds a configuration, whose values are locked.
public final class CKFetchRecordZoneChangesOptions: NSObject, NSSecureCoding, @unchecked Sendable {
    let configuration: CKFetchRecordZoneChangesConfiguration

    public override init() { configuration = CKFetchRecordZoneChangesConfiguration() }
    init(configuration: CKFetchRecordZoneChangesConfiguration) { self.configuration = configuration }

    public var previousServerChangeToken: CKServerChangeToken? {
        get { configuration.previousServerChangeToken }
        set { configuration.previousServerChangeToken = newValue }
    }
    public var resultsLimit: Int { get { configuration.resultsLimit } set { configuration.resultsLimit = newValue } }
    public var desiredKeys: [CKRecord.FieldKey]? { get { configuration.desiredKeys } set { configuration.desiredKeys = newValue } }

    public static var supportsSecureCoding: Bool { true }
    public func encode(with coder: NSCoder) { configuration.encode(with: coder) }
    public init?(coder: NSCoder) {
        guard let configuration = CKFetchRecordZoneChangesConfiguration(coder: coder) else { return nil }
        self.configuration = configuration
    }
}

/// The records saved and deleted in some zones since each zone's token: the second half of a
/// sync loop. Records come through ``recordWasChangedBlock``, deletions through
/// ``recordWithIDWasDeletedBlock``, each zone's new token through
/// ``recordZoneChangeTokensUpdatedBlock`` (between pages) and ``recordZoneFetchResultBlock``
/// (at its end).
/// `@unchecked Sendable` as every operation: inputs and blocks are set before it starts and
/// only read while it runs (Apple's contract); its running state is under ``CKOperation``'s lock.
open class CKFetchRecordZoneChangesOperation: CKDatabaseOperation, @unchecked Sendable {
    /// What to fetch of one zone (``CKFetchRecordZoneChangesConfiguration``).
    public typealias ZoneConfiguration = CKFetchRecordZoneChangesConfiguration

    public var recordZoneIDs: [CKRecordZone.ID]?
    public var configurationsByRecordZoneID: [CKRecordZone.ID: ZoneConfiguration]?
    /// Fetch page after page until each zone has nothing more (the default), or stop after one.
    public var fetchAllChanges = true

    public var recordWasChangedBlock: ((CKRecord.ID, Result<CKRecord, any Error>) -> Void)?
    /// The older form of ``recordWasChangedBlock``.
    public var recordChangedBlock: ((CKRecord) -> Void)?
    /// A deleted record and its type (empty for a deletion logged before ckfs kept types).
    public var recordWithIDWasDeletedBlock: ((CKRecord.ID, CKRecord.RecordType) -> Void)?
    public var recordZoneChangeTokensUpdatedBlock: ((CKRecordZone.ID, CKServerChangeToken?, Data?) -> Void)?
    public var recordZoneFetchResultBlock: ((CKRecordZone.ID, Result<(serverChangeToken: CKServerChangeToken, clientChangeTokenData: Data?, moreComing: Bool), any Error>) -> Void)?
    /// The older form of ``recordZoneFetchResultBlock``.
    public var recordZoneFetchCompletionBlock: ((CKRecordZone.ID, CKServerChangeToken?, Data?, Bool, (any Error)?) -> Void)?
    /// The end of the operation: a failure only when the whole operation failed.
    public var fetchRecordZoneChangesResultBlock: ((Result<Void, any Error>) -> Void)?
    /// The older form of ``fetchRecordZoneChangesResultBlock``.
    public var fetchRecordZoneChangesCompletionBlock: (((any Error)?) -> Void)?

    public init(recordZoneIDs: [CKRecordZone.ID]? = nil, configurationsByRecordZoneID: [CKRecordZone.ID: ZoneConfiguration]? = nil) {
        self.recordZoneIDs = recordZoneIDs
        self.configurationsByRecordZoneID = configurationsByRecordZoneID
        super.init()
    }

    // Apple's older form of the settings by zone (deprecated there since iOS 12), read and
    // written through `configurationsByRecordZoneID`.

    /// What to fetch of one zone, in Apple's older form (``CKFetchRecordZoneChangesOptions``).
    public typealias ZoneOptions = CKFetchRecordZoneChangesOptions

    @available(*, deprecated, renamed: "init(recordZoneIDs:configurationsByRecordZoneID:)")
    public convenience init(recordZoneIDs: [CKRecordZone.ID], optionsByRecordZoneID: [CKRecordZone.ID: ZoneOptions]?) {
        self.init(recordZoneIDs: recordZoneIDs, configurationsByRecordZoneID: optionsByRecordZoneID?.mapValues(\.configuration))
    }

    @available(*, deprecated, renamed: "configurationsByRecordZoneID")
    public var optionsByRecordZoneID: [CKRecordZone.ID: ZoneOptions]? {
        get { configurationsByRecordZoneID?.mapValues(ZoneOptions.init(configuration:)) }
        set { configurationsByRecordZoneID = newValue?.mapValues(\.configuration) }
    }

    open override func main() {
        var failures: [CKItemID: CKError] = [:]
        let database = targetDatabase
        for zoneID in recordZoneIDs ?? [] {
            do throws(CKError) {
                try fetch(zoneID, in: database.engine(zone: zoneID), database)
            } catch {
                failures[.zone(zoneID.engine)] = error
                recordZoneFetchResultBlock?(zoneID, .failure(error))
                recordZoneFetchCompletionBlock?(zoneID, nil, nil, false, error)
            }
        }
        // As Apple's result blocks: each zone's error went to recordZoneFetchResultBlock; the
        // older completion block gets them together as a partial failure.
        fetchRecordZoneChangesResultBlock?(isCancelled ? .failure(CKError(.operationCancelled, "the operation was cancelled")) : .success(()))
        fetchRecordZoneChangesCompletionBlock?(CKError.partialFailure(failures, "\(failures.count) of \(recordZoneIDs?.count ?? 0) zones could not be fetched"))
    }

    /// Every page of one zone's changes, through the blocks; the zone's ID as the caller wrote it.
    private func fetch(_ zoneID: CKRecordZone.ID, in db: Database, _ database: CKDatabase) throws(CKError) {
        if isCancelled { throw CKError(.operationCancelled, "the operation was cancelled") }
        let configuration = configurationsByRecordZoneID?[zoneID]
        var token = try CKDatabase.zoneToken(configuration?.previousServerChangeToken)
        let limit = (configuration?.resultsLimit ?? 0) > 0 ? configuration?.resultsLimit : nil
        while true {
            let page = try db.changes(in: zoneID.zoneName, since: token, limit: limit, desiredKeys: configuration?.desiredKeys)
            for record in page.changed {
                let out = database.wrap(record, db)
                recordWasChangedBlock?(CKRecord.ID(recordName: record.recordID.recordName, zoneID: zoneID), .success(out))
                recordChangedBlock?(out)
            }
            for id in page.deleted {
                recordWithIDWasDeletedBlock?(CKRecord.ID(recordName: id.recordName, zoneID: zoneID), page.deletedRecordTypes[id.recordName] ?? "")
            }
            token = page.token
            let next = CKServerChangeToken(zone: page.token)
            guard page.moreComing, fetchAllChanges else {
                recordZoneFetchResultBlock?(zoneID, .success((next, page.clientChangeToken, page.moreComing)))
                recordZoneFetchCompletionBlock?(zoneID, next, page.clientChangeToken, page.moreComing, nil)
                return
            }
            recordZoneChangeTokensUpdatedBlock?(zoneID, next, page.clientChangeToken)
            if isCancelled { throw CKError(.operationCancelled, "the operation was cancelled") }
        }
    }
}

/// The changes of one zone since a token, one page (`resultsLimit`, 0: the store's page), as
/// iOS 8 and 9 fetched them (deprecated by Apple since iOS 10 for
/// ``CKFetchRecordZoneChangesOperation``); old sync code still calls it.
open class CKFetchRecordChangesOperation: CKDatabaseOperation, @unchecked Sendable {
    public var recordZoneID: CKRecordZone.ID?
    public var previousServerChangeToken: CKServerChangeToken?
    public var resultsLimit = 0
    public var desiredKeys: [CKRecord.FieldKey]?
    public var recordChangedBlock: ((CKRecord) -> Void)?
    public var recordWithIDWasDeletedBlock: ((CKRecord.ID) -> Void)?
    /// The token to fetch from next, the client change token of the zone's last save, the error.
    public var fetchRecordChangesCompletionBlock: ((CKServerChangeToken?, Data?, Error?) -> Void)?
    /// Set when done: more changes remain past `resultsLimit`.
    public var moreComing: Bool { lock.withLock { more } }
    /// Guarded by `lock`.
    private var more = false

    public override init() {}

    public convenience init(recordZoneID: CKRecordZone.ID, previousServerChangeToken: CKServerChangeToken?) {
        self.init()
        self.recordZoneID = recordZoneID
        self.previousServerChangeToken = previousServerChangeToken
    }

    open override func main() {
        do throws(CKError) {
            if isCancelled { throw CKError(.operationCancelled, "the operation was cancelled") }
            guard let zoneID = recordZoneID else { throw CKError(.invalidArguments, "a record changes operation needs a recordZoneID") }
            let database = targetDatabase
            let db = try database.engine(zone: zoneID)
            let page = try db.changes(in: zoneID.zoneName, since: try CKDatabase.zoneToken(previousServerChangeToken),
                                      limit: resultsLimit > 0 ? resultsLimit : nil, desiredKeys: desiredKeys)
            for record in page.changed { recordChangedBlock?(database.wrap(record, db)) }
            for id in page.deleted { recordWithIDWasDeletedBlock?(CKRecord.ID(recordName: id.recordName, zoneID: zoneID)) }
            lock.withLock { more = page.moreComing }
            fetchRecordChangesCompletionBlock?(CKServerChangeToken(zone: page.token), page.clientChangeToken, nil)
        } catch {
            fetchRecordChangesCompletionBlock?(nil, nil, error)
        }
    }
}
