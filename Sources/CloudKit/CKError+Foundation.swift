import Foundation
import CloudStore

/// The domain of CloudKit's errors as `NSError`s.
public let CKErrorDomain = "CKErrorDomain"
/// In a `partialFailure`'s `userInfo`: the error of each failed item, by the item's ID.
public let CKPartialErrorsByItemIDKey = "CKPartialErrors"
/// In a `serverRecordChanged`'s `userInfo`: the record as the client last fetched it.
public let CKRecordChangedErrorAncestorRecordKey = "AncestorRecord"
/// In a `serverRecordChanged`'s `userInfo`: the record as stored.
public let CKRecordChangedErrorServerRecordKey = "ServerRecord"
/// In a `serverRecordChanged`'s `userInfo`: the record as the client sent it.
public let CKRecordChangedErrorClientRecordKey = "ClientRecord"
/// In `userInfo`: seconds to wait before trying again, an `NSNumber`.
public let CKErrorRetryAfterKey = "CKRetryAfter"
/// In `userInfo`: set when the user reset their encrypted data (never, in a local store).
public let CKErrorUserDidResetEncryptedDataKey = "CKErrorUserDidResetEncryptedDataKey"

/// CKError as CloudKit code sees it: an `NSError` of `CKErrorDomain` with Apple's codes and
/// `userInfo` keys, the records of a conflict as objects, partial errors by the callers' IDs.
extension CKError: CustomNSError {
    public static var errorDomain: String { CKErrorDomain }
    public var errorCode: Int { code.rawValue }
    public var errorUserInfo: [String: Any] { userInfo }

    /// The message under `NSLocalizedDescriptionKey`, and each value below under its CloudKit key.
    public var userInfo: [String: Any] {
        var info: [String: Any] = [NSLocalizedDescriptionKey: message, NSDebugDescriptionErrorKey: description]
        if let partialErrorsByItemID { info[CKPartialErrorsByItemIDKey] = partialErrorsByItemID }
        if let serverRecord { info[CKRecordChangedErrorServerRecordKey] = serverRecord }
        if let clientRecord { info[CKRecordChangedErrorClientRecordKey] = clientRecord }
        if let ancestorRecord { info[CKRecordChangedErrorAncestorRecordKey] = ancestorRecord }
        if let retryAfterSeconds { info[CKErrorRetryAfterKey] = NSNumber(value: retryAfterSeconds) }
        return info
    }

    /// An error with a code and, as Apple's initializer takes them, `userInfo` values under
    /// CloudKit's keys (code that builds errors to test its own handling uses this).
    public init(_ code: Code, userInfo: [String: Any] = [:]) {
        self.init(code, userInfo[NSLocalizedDescriptionKey] as? String ?? "CloudKit error \(code.name)")
        retryAfterSeconds = (userInfo[CKErrorRetryAfterKey] as? NSNumber)?.doubleValue ?? userInfo[CKErrorRetryAfterKey] as? Double
        serverRecordValue = (userInfo[CKRecordChangedErrorServerRecordKey] as? CKRecord)?.record
        clientRecordValue = (userInfo[CKRecordChangedErrorClientRecordKey] as? CKRecord)?.record
        ancestorRecordValue = (userInfo[CKRecordChangedErrorAncestorRecordKey] as? CKRecord)?.record
        if let partial = userInfo[CKPartialErrorsByItemIDKey] as? [AnyHashable: any Error] {
            var errors: [CKItemID: CKError] = [:]
            for (key, error) in partial {
                guard let item = CKItemID(key.base) else { continue }
                errors[item] = error as? CKError ?? CKError(_nsError: error as NSError)
            }
            partialErrors = errors
        }
    }

    /// The same error from its `NSError` form; an error of another domain is `internalError`
    /// with that error as its cause.
    public init(_nsError error: NSError) {
        let code = error.domain == CKErrorDomain ? Code(rawValue: error.code) ?? .internalError : .internalError
        self.init(code, userInfo: error.userInfo)
        if error.domain != CKErrorDomain { cause = .other("\(error.domain) \(error.code): \(error.localizedDescription)") }
    }

    /// For `partialFailure`: each failed item's error, keyed by its `CKRecord.ID`,
    /// `CKRecordZone.ID` or subscription ID.
    public var partialErrorsByItemID: [AnyHashable: any Error]? {
        partialErrors.map { errors in
            Dictionary(uniqueKeysWithValues: errors.map { (key, error) -> (AnyHashable, any Error) in (key.itemID, error) })
        }
    }

    /// For `serverRecordChanged`: the record as stored, the same object each time it is read;
    /// as its database shows records (in the shared database, in its owner's zone; assets at
    /// their files), so that the merged record saves back where it came from.
    public var serverRecord: CKRecord? { presentedObject("server", serverRecordValue) }
    /// For `serverRecordChanged`: the record as the client sent it.
    public var clientRecord: CKRecord? { presentedObject("client", clientRecordValue) }
    /// For `serverRecordChanged`: the version the client last fetched, when still known.
    public var ancestorRecord: CKRecord? { presentedObject("ancestor", ancestorRecordValue) }

    private func presentedObject(_ key: String, _ record: Record?) -> CKRecord? {
        let presenter = objects.presenter
        return objects.object(key, from: record) { presenter?($0) as? CKRecord ?? CKRecord.presented($0, assetDirectory: nil) }
    }

    /// This error, and the item errors of a partial failure, show their records as `db` does.
    func presented(by database: CKDatabase, _ db: any RecordAccess) -> CKError {
        objects.present { [database] in database.wrap($0, db) }
        for item in partialErrors?.values ?? [:].values { _ = item.presented(by: database, db) }
        return self
    }

    /// This error with its records keyed by the IDs the caller wrote, so that
    /// `partialErrorsByItemID[id]` finds the caller's own `id`.
    func keyed(by callerIDs: CallerIDs) -> CKError {
        guard let partialErrors else { return self }
        var copy = self
        copy.partialErrors = Dictionary(partialErrors.map { (key, error) -> (CKItemID, CKError) in
            guard case .record(let id) = key else { return (key, error) }
            return (.record(callerIDs[id].engine), error)
        }, uniquingKeysWith: { first, _ in first })
        return copy
    }
}

extension CKItemID {
    /// The ID CloudKit code keys a partial error by.
    var itemID: AnyHashable {
        switch self {
        case .record(let id): AnyHashable(CKRecord.ID(id))
        case .zone(let id): AnyHashable(CKRecordZone.ID(id))
        case .subscription(let id): AnyHashable(id)
        }
    }

    /// The item of a `CKRecord.ID`, `CKRecordZone.ID` or subscription ID.
    init?(_ id: Any) {
        switch id {
        case let id as CKRecord.ID: self = .record(id.engine)
        case let id as CKRecordZone.ID: self = .zone(id.engine)
        case let id as CKSubscription.ID: self = .subscription(id)
        default: return nil
        }
    }
}
