import Foundation
import CloudStore

/// A query as CloudKit code writes it: a record type, an `NSPredicate` and `NSSortDescriptor`s.
/// As Apple's, an `NSObject` with `NSSecureCoding` and `NSCopying`: an app may archive the
/// queries it runs again. Its predicate and sorts are Foundation's types, as Apple's: those
/// `NSPredicate(format:…)` and `NSSortDescriptor(key:ascending:)` make, compounds of them, and
/// `NSPredicate(value: true)`.
///
/// `@unchecked Sendable`: `lock` guards `sorts`, the one stored property that changes; the
/// predicate and sorts are never changed after they are given.
open class CKQuery: NSObject, NSSecureCoding, NSCopying, @unchecked Sendable {
    public let recordType: CKRecord.RecordType
    public let predicate: NSPredicate
    /// Guards `sorts`.
    private let lock = NSLock()
    private var sorts: [NSSortDescriptor]?

    public init(recordType: CKRecord.RecordType, predicate: NSPredicate) {
        self.recordType = recordType
        self.predicate = predicate
    }

    /// A query with a predicate of the engine's form.
    public convenience init(recordType: CKRecord.RecordType, predicate: QueryPredicate) {
        self.init(recordType: recordType, predicate: CloudKitPredicate(predicate))
    }

    /// The order of results; records with equal keys come by record name.
    open var sortDescriptors: [NSSortDescriptor]? {
        get { lock.withLock { sorts } }
        set { lock.withLock { sorts = newValue } }
    }

    /// The engine's query; `invalidArguments` when the predicate or a sort key is not CloudKit's.
    func recordQuery() throws(CKError) -> RecordQuery {
        let sorts = try (sortDescriptors ?? []).map { (d) throws(CKError) in try d.cloudKitSortDescriptor() }
        return RecordQuery(recordType: recordType, predicate: try predicate.cloudKitQueryPredicate(), sortDescriptors: sorts)
    }

    open override var description: String { "<CKQuery \(recordType) where \(predicate.cloudKitText)>" }

    /// A query of its own, with the same type, predicate and sort.
    open func copy(with zone: NSZone? = nil) -> Any {
        let copy = CKQuery(recordType: recordType, predicate: predicate)
        copy.sortDescriptors = sortDescriptors
        return copy
    }

    public class var supportsSecureCoding: Bool { true }

    open func encode(with coder: NSCoder) {
        coder.encode(recordType as NSString, forKey: "recordType")
        coder.encode(predicate.archivable, forKey: "predicate")
        if let sorts = sortDescriptors { coder.encode(NSArray(array: sorts.filter { $0 is CloudKitSortDescriptor }), forKey: "sortDescriptors") }
    }

    public required init?(coder: NSCoder) {
        guard let type = coder.decodeObject(of: NSString.self, forKey: "recordType") as String?,
              let predicate = coder.decodeObject(of: [CloudKitPredicate.self, CloudKitCompoundPredicate.self], forKey: "predicate") as? NSPredicate
        else { return nil }
        recordType = type
        self.predicate = predicate
        sorts = coder.decodeObjectIfPresent(of: [NSArray.self, CloudKitSortDescriptor.self, CKLocationSortDescriptor.self], forKey: "sortDescriptors") as? [NSSortDescriptor]
    }
}

/// Runs a query in one zone, a page at a time: `recordMatchedBlock` per record, then
/// `queryResultBlock` with a cursor when more remain.
open class CKQueryOperation: CKDatabaseOperation, @unchecked Sendable {
    /// As many records as the store gives in one page (``defaultPageSize``).
    public static let maximumResults = 0
    /// The page size when `resultsLimit` is ``maximumResults``.
    public static let defaultPageSize = 100

    public var query: CKQuery?
    public var cursor: Cursor?
    /// The zone to search (default: the default zone); ignored when continuing from a cursor.
    public var zoneID: CKRecordZone.ID?
    public var resultsLimit = CKQueryOperation.maximumResults
    public var desiredKeys: [String]?
    public var recordMatchedBlock: ((CKRecord.ID, Result<CKRecord, Error>) -> Void)?
    public var queryResultBlock: ((Result<Cursor?, Error>) -> Void)?
    /// CloudKit's older per-record block.
    public var recordFetchedBlock: ((CKRecord) -> Void)?
    /// CloudKit's older completion block.
    public var queryCompletionBlock: ((Cursor?, Error?) -> Void)?

    /// An operation whose query or cursor is set later.
    public override init() {}
    public init(query: CKQuery) { self.query = query }
    public init(cursor: Cursor) { self.cursor = cursor }

    open override func main() {
        do throws(CKError) {
            let database = targetDatabase
            let (records, next) = try database.runQuery(query: query, cursor: cursor, zoneID: zoneID, resultsLimit: resultsLimit, desiredKeys: desiredKeys)
            for record in records {
                if isCancelled { throw CKError(.operationCancelled, "the query was cancelled") }
                recordMatchedBlock?(record.recordID, .success(record))
                recordFetchedBlock?(record)
            }
            queryResultBlock?(.success(next))
            queryCompletionBlock?(next, nil)
        } catch {
            queryResultBlock?(.failure(error))
            queryCompletionBlock?(nil, error)
        }
    }
}

extension CKDatabase {
    /// One page of a query, or the page after a cursor.
    func runQuery(query: CKQuery?, cursor: CKQueryOperation.Cursor?, zoneID: CKRecordZone.ID?, resultsLimit: Int,
                  desiredKeys: [String]?) throws(CKError) -> ([CKRecord], CKQueryOperation.Cursor?) {
        guard resultsLimit >= 0 else { throw CKError(.invalidArguments, "resultsLimit must not be negative") }
        let recordQuery: RecordQuery
        let zone: String
        if let cursor {
            recordQuery = cursor.query
            zone = cursor.zoneName
        } else if let query {
            recordQuery = try query.recordQuery()
            zone = zoneID?.zoneName ?? ZoneID.defaultZoneName
        } else {
            throw CKError(.invalidArguments, "a query operation needs a query or a cursor")
        }
        let db = try engine(zone: zoneID ?? CKRecordZone.ID(zoneName: zone, ownerName: CKCurrentUserDefaultName))
        let limit = resultsLimit == CKQueryOperation.maximumResults ? CKQueryOperation.defaultPageSize : resultsLimit
        let result = try db.query(recordQuery, in: zone, limit: limit, cursor: cursor?.cursor, desiredKeys: desiredKeys)
        return (result.records.map { wrap($0, db) },
                result.cursor.map { CKQueryOperation.Cursor(query: recordQuery, zoneName: zone, cursor: $0) })
    }

    /// The records matching a query, a page at a time.
    public func records(matching query: CKQuery, inZoneWith zoneID: CKRecordZone.ID? = nil, desiredKeys: [String]? = nil,
                        resultsLimit: Int = CKQueryOperation.maximumResults)
        async throws -> (matchResults: [(CKRecord.ID, Result<CKRecord, Error>)], queryCursor: CKQueryOperation.Cursor?) {
        let (records, next) = try runQuery(query: query, cursor: nil, zoneID: zoneID, resultsLimit: resultsLimit, desiredKeys: desiredKeys)
        return (records.map { ($0.recordID, .success($0)) }, next)
    }

    /// The page after a cursor.
    public func records(continuingMatchFrom cursor: CKQueryOperation.Cursor, desiredKeys: [String]? = nil,
                        resultsLimit: Int = CKQueryOperation.maximumResults)
        async throws -> (matchResults: [(CKRecord.ID, Result<CKRecord, Error>)], queryCursor: CKQueryOperation.Cursor?) {
        let (records, next) = try runQuery(query: nil, cursor: cursor, zoneID: nil, resultsLimit: resultsLimit, desiredKeys: desiredKeys)
        return (records.map { ($0.recordID, .success($0)) }, next)
    }

    /// CloudKit's older async form (deprecated in Apple's SDK): one page of records.
    @available(*, deprecated, renamed: "records(matching:inZoneWith:desiredKeys:resultsLimit:)")
    public func records(matching query: CKQuery, inZoneWith zoneID: CKRecordZone.ID?) async throws -> [CKRecord] {
        try runQuery(query: query, cursor: nil, zoneID: zoneID, resultsLimit: 0, desiredKeys: nil).0
    }

    /// CloudKit's older async form (deprecated in Apple's SDK): one page of records.
    @available(*, deprecated, renamed: "records(matching:inZoneWith:desiredKeys:resultsLimit:)")
    public func perform(_ query: CKQuery, inZoneWith zoneID: CKRecordZone.ID?) async throws -> [CKRecord] {
        try runQuery(query: query, cursor: nil, zoneID: zoneID, resultsLimit: 0, desiredKeys: nil).0
    }

    /// CloudKit's older form: one page of records, with a completion handler.
    public func perform(_ query: CKQuery, inZoneWith zoneID: CKRecordZone.ID?,
                        completionHandler: @escaping @Sendable ([CKRecord]?, Error?) -> Void) {
        container.complete(completionHandler) { () throws(CKError) in
            try self.runQuery(query: query, cursor: nil, zoneID: zoneID, resultsLimit: 0, desiredKeys: nil).0
        }
    }

    /// One page of a query, with a completion handler that takes a `Result`.
    public func fetch(withQuery query: CKQuery, inZoneWith zoneID: CKRecordZone.ID? = nil, desiredKeys: [CKRecord.FieldKey]? = nil,
                      resultsLimit: Int = CKQueryOperation.maximumResults,
                      completionHandler: @escaping @Sendable (Result<(matchResults: [(CKRecord.ID, Result<CKRecord, Error>)], queryCursor: CKQueryOperation.Cursor?), Error>) -> Void) {
        container.complete({ (page: (matchResults: [(CKRecord.ID, Result<CKRecord, Error>)], queryCursor: CKQueryOperation.Cursor?)?, error: Error?) in
            completionHandler(page.map { .success($0) } ?? .failure(error ?? CKError(.internalError, "the query ended without a result")))
        }) { () throws(CKError) in
            let (records, cursor) = try self.runQuery(query: query, cursor: nil, zoneID: zoneID, resultsLimit: resultsLimit, desiredKeys: desiredKeys)
            return (records.map { ($0.recordID, .success($0)) }, cursor)
        }
    }
}
