import Foundation

/// The one error type of ckfs: a CloudKit error code, a message that says what was wrong and
/// how to fix it, and what caused it.
///
/// Match it as CloudKit code does:
/// ```swift
/// do { try await db.save(record) }
/// catch let error as CKError where error.code == .serverRecordChanged { … }
/// catch CKError.unknownItem { … }
/// ```
public struct CKError: Error, Sendable, CustomStringConvertible {
    /// CloudKit's error codes, with Apple's numbers: every one Apple declares, also those a
    /// local store never raises (network and account codes), so CloudKit code that switches
    /// over them compiles unchanged.
    public enum Code: Int, Sendable, CaseIterable, CustomStringConvertible {
        case internalError = 1
        case partialFailure = 2
        case networkUnavailable = 3
        case networkFailure = 4
        case badContainer = 5
        case serviceUnavailable = 6
        case requestRateLimited = 7
        case missingEntitlement = 8
        case notAuthenticated = 9
        case permissionFailure = 10
        case unknownItem = 11
        case invalidArguments = 12
        case resultsTruncated = 13
        case serverRecordChanged = 14
        case serverRejectedRequest = 15
        case assetFileNotFound = 16
        case assetFileModified = 17
        case incompatibleVersion = 18
        case constraintViolation = 19
        case operationCancelled = 20
        case changeTokenExpired = 21
        case batchRequestFailed = 22
        case zoneBusy = 23
        case badDatabase = 24
        case quotaExceeded = 25
        case zoneNotFound = 26
        case limitExceeded = 27
        case userDeletedZone = 28
        case tooManyParticipants = 29
        case alreadyShared = 30
        case referenceViolation = 31
        case managedAccountRestricted = 32
        case participantMayNeedVerification = 33
        case serverResponseLost = 34
        case assetNotAvailable = 35
        case accountTemporarilyUnavailable = 36
        case participantAlreadyInvited = 37

        private static let names = [
            "internalError", "partialFailure", "networkUnavailable", "networkFailure", "badContainer",
            "serviceUnavailable", "requestRateLimited", "missingEntitlement", "notAuthenticated",
            "permissionFailure", "unknownItem", "invalidArguments", "resultsTruncated", "serverRecordChanged",
            "serverRejectedRequest", "assetFileNotFound", "assetFileModified", "incompatibleVersion",
            "constraintViolation", "operationCancelled", "changeTokenExpired", "batchRequestFailed", "zoneBusy",
            "badDatabase", "quotaExceeded", "zoneNotFound", "limitExceeded", "userDeletedZone",
            "tooManyParticipants", "alreadyShared", "referenceViolation", "managedAccountRestricted",
            "participantMayNeedVerification", "serverResponseLost", "assetNotAvailable",
            "accountTemporarilyUnavailable", "participantAlreadyInvited",
        ]

        /// CloudKit's name of the code, as printed by the CLI (`serverRecordChanged`).
        public var name: String { Self.names[rawValue - 1] }
        public var description: String { name }
    }

    /// What lies under an error.
    public enum Cause: Sendable {
        /// A system call failed.
        case system(SystemCallError)
        /// Text that did not parse.
        case syntax(SyntaxError)
        /// Anything else, described.
        case other(String)
        /// SQLite answered with this result code (extended), for the index it keeps of a zone.
        case database(Int32)

        /// ENOSPC or EDQUOT when a system call failed for want of room.
        var diskFull: Int32? {
            if case .system(let e) = self, e.errno == Posix.ENOSPC || e.errno == Posix.EDQUOT { return e.errno }
            return nil
        }
    }

    public var code: Code
    public var message: String
    public var cause: Cause?

    /// For `partialFailure`: the error of every item that failed, by item. (CloudKit's
    /// `partialErrorsByItemID` gives the same, keyed by the items' IDs.)
    public var partialErrors: [CKItemID: CKError]?

    /// For errors that pass (`zoneBusy`, `requestRateLimited`, …): how long to wait before
    /// trying again, in seconds.
    public var retryAfterSeconds: Double?

    /// The objects made from this error's values for CloudKit code, shared by its copies.
    package let objects = ErrorObjects()

    /// For `serverRecordChanged`: the record as stored, as the client sent it, and as the
    /// client last fetched it (its change tag and fields, when known).
    public var serverRecordValue: Record?
    public var clientRecordValue: Record?
    public var ancestorRecordValue: Record?

    public init(_ code: Code, _ message: String, cause: Cause? = nil) {
        self.code = code
        self.message = message
        self.cause = cause
        // A store failure that is only a full disk is said as such, with CloudKit's code for
        // running out of room, in this one place rather than at every call that writes.
        if code == .internalError, let full = cause?.diskFull {
            self.code = .quotaExceeded
            self.message = message + (full == Posix.ENOSPC ? "; the disk holding the store is full: free space on it and try again"
                                                     : "; the disk quota of the store's owner is used up: free space and try again")
        }
    }

    /// ENOSPC or EDQUOT when this error comes from a disk out of room.
    public var diskFull: Int32? {
        if let full = cause?.diskFull { return full }
        return partialErrors?.values.lazy.compactMap(\.diskFull).first
    }

    public var description: String {
        var text = "\(code.name): \(message)"
        switch cause {
        case .system(let e)?: text += " (\(e))"
        case .syntax(let e)?: text += " (\(e))"
        case .other(let s)?: text += " (\(s))"
        case .database(let code)?: text += " (SQLite result code \(code))"
        case nil: break
        }
        return text
    }

    public var localizedDescription: String { description }

    // `CKError.unknownItem` and the like, as Apple's CKError declares them.
    public static var internalError: Code { .internalError }
    public static var partialFailure: Code { .partialFailure }
    public static var networkUnavailable: Code { .networkUnavailable }
    public static var networkFailure: Code { .networkFailure }
    public static var badContainer: Code { .badContainer }
    public static var serviceUnavailable: Code { .serviceUnavailable }
    public static var requestRateLimited: Code { .requestRateLimited }
    public static var missingEntitlement: Code { .missingEntitlement }
    public static var notAuthenticated: Code { .notAuthenticated }
    public static var permissionFailure: Code { .permissionFailure }
    public static var unknownItem: Code { .unknownItem }
    public static var invalidArguments: Code { .invalidArguments }
    public static var resultsTruncated: Code { .resultsTruncated }
    public static var serverRecordChanged: Code { .serverRecordChanged }
    public static var serverRejectedRequest: Code { .serverRejectedRequest }
    public static var assetFileNotFound: Code { .assetFileNotFound }
    public static var assetFileModified: Code { .assetFileModified }
    public static var incompatibleVersion: Code { .incompatibleVersion }
    public static var constraintViolation: Code { .constraintViolation }
    public static var operationCancelled: Code { .operationCancelled }
    public static var changeTokenExpired: Code { .changeTokenExpired }
    public static var batchRequestFailed: Code { .batchRequestFailed }
    public static var zoneBusy: Code { .zoneBusy }
    public static var badDatabase: Code { .badDatabase }
    public static var quotaExceeded: Code { .quotaExceeded }
    public static var zoneNotFound: Code { .zoneNotFound }
    public static var limitExceeded: Code { .limitExceeded }
    public static var userDeletedZone: Code { .userDeletedZone }
    public static var tooManyParticipants: Code { .tooManyParticipants }
    public static var alreadyShared: Code { .alreadyShared }
    public static var referenceViolation: Code { .referenceViolation }
    public static var managedAccountRestricted: Code { .managedAccountRestricted }
    public static var participantMayNeedVerification: Code { .participantMayNeedVerification }
    public static var serverResponseLost: Code { .serverResponseLost }
    public static var assetNotAvailable: Code { .assetNotAvailable }
    public static var accountTemporarilyUnavailable: Code { .accountTemporarilyUnavailable }
    public static var participantAlreadyInvited: Code { .participantAlreadyInvited }
}

/// The item an error in ``CKError/partialErrors`` belongs to.
public enum CKItemID: Hashable, Sendable, CustomStringConvertible {
    case record(RecordID)
    case zone(ZoneID)
    case subscription(String)

    public var description: String {
        switch self {
        case .record(let id): "record \(id.recordName) (zone \(id.zoneID.zoneName))"
        case .zone(let id): "zone \(id.zoneName)"
        case .subscription(let id): "subscription \(id)"
        }
    }
}

extension CKError.Code {
    /// `catch CKError.unknownItem` matches any ``CKError`` with that code.
    public static func ~= (code: CKError.Code, error: any Error) -> Bool {
        (error as? CKError)?.code == code
    }
}

extension CKError {
    /// The error of one record in a partial failure.
    public func partialError(for recordID: RecordID) -> CKError? { partialErrors?[.record(recordID)] }

    /// `partialFailure` holding each failed item's error; nil when no item failed.
    public static func partialFailure(_ errors: [CKItemID: CKError], _ message: String) -> CKError? {
        guard !errors.isEmpty else { return nil }
        var error = CKError(.partialFailure, message)
        error.partialErrors = errors
        return error
    }

    package static func invalid(_ message: String) -> CKError { CKError(.invalidArguments, message) }
}
