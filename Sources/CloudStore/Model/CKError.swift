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
    /// An open set of codes with CloudKit's numbers, so new codes never break a `switch`.
    public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        public var rawValue: Int
        public init(rawValue: Int) { self.rawValue = rawValue }

        public static let internalError = Code(rawValue: 1)
        public static let partialFailure = Code(rawValue: 2)
        public static let badContainer = Code(rawValue: 5)
        public static let notAuthenticated = Code(rawValue: 9)
        public static let permissionFailure = Code(rawValue: 10)
        public static let unknownItem = Code(rawValue: 11)
        public static let invalidArguments = Code(rawValue: 12)
        public static let serverRecordChanged = Code(rawValue: 14)
        public static let serverRejectedRequest = Code(rawValue: 15)
        public static let assetFileNotFound = Code(rawValue: 16)
        public static let constraintViolation = Code(rawValue: 19)
        public static let operationCancelled = Code(rawValue: 20)
        public static let changeTokenExpired = Code(rawValue: 21)
        public static let batchRequestFailed = Code(rawValue: 22)
        public static let zoneBusy = Code(rawValue: 23)
        public static let badDatabase = Code(rawValue: 24)
        public static let quotaExceeded = Code(rawValue: 25)
        public static let zoneNotFound = Code(rawValue: 26)
        public static let limitExceeded = Code(rawValue: 27)
        public static let referenceViolation = Code(rawValue: 31)

        static let names: [Int: String] = [
            1: "internalError", 2: "partialFailure", 5: "badContainer", 9: "notAuthenticated",
            10: "permissionFailure", 11: "unknownItem", 12: "invalidArguments",
            14: "serverRecordChanged", 15: "serverRejectedRequest", 16: "assetFileNotFound",
            19: "constraintViolation", 20: "operationCancelled", 21: "changeTokenExpired",
            22: "batchRequestFailed", 23: "zoneBusy", 24: "badDatabase", 25: "quotaExceeded",
            26: "zoneNotFound", 27: "limitExceeded", 31: "referenceViolation",
        ]

        /// CloudKit's name of the code, as printed by the CLI (`serverRecordChanged`).
        public var name: String { Self.names[rawValue] ?? "code\(rawValue)" }
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

        /// ENOSPC or EDQUOT when a system call failed for want of room.
        var diskFull: Int32? {
            if case .system(let e) = self, e.errno == ENOSPC || e.errno == EDQUOT { return e.errno }
            return nil
        }
    }

    public var code: Code
    public var message: String
    public var cause: Cause?

    /// For `partialFailure`: the error of every item that failed, by item.
    public var partialErrorsByItemID: [CKItemID: CKError]?

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
            self.message = message + (full == ENOSPC ? "; the disk holding the store is full: free space on it and try again"
                                                     : "; the disk quota of the store's owner is used up: free space and try again")
        }
    }

    /// ENOSPC or EDQUOT when this error comes from a disk out of room.
    public var diskFull: Int32? {
        if let full = cause?.diskFull { return full }
        return partialErrorsByItemID?.values.lazy.compactMap(\.diskFull).first
    }

    public var description: String {
        var text = "\(code.name): \(message)"
        switch cause {
        case .system(let e)?: text += " (\(e))"
        case .syntax(let e)?: text += " (\(e))"
        case .other(let s)?: text += " (\(s))"
        case nil: break
        }
        return text
    }

    public var localizedDescription: String { description }


    public static var internalError: Code { .internalError }
    public static var partialFailure: Code { .partialFailure }
    public static var unknownItem: Code { .unknownItem }
    public static var invalidArguments: Code { .invalidArguments }
    public static var serverRecordChanged: Code { .serverRecordChanged }
    public static var quotaExceeded: Code { .quotaExceeded }
    public static var limitExceeded: Code { .limitExceeded }
    public static var zoneNotFound: Code { .zoneNotFound }
    public static var batchRequestFailed: Code { .batchRequestFailed }
    public static var changeTokenExpired: Code { .changeTokenExpired }
    public static var permissionFailure: Code { .permissionFailure }
    public static var notAuthenticated: Code { .notAuthenticated }
    public static var referenceViolation: Code { .referenceViolation }
    public static var operationCancelled: Code { .operationCancelled }
}

/// The item an error in ``CKError/partialErrorsByItemID`` belongs to.
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
    public func partialError(for recordID: RecordID) -> CKError? { partialErrorsByItemID?[.record(recordID)] }

    /// `partialFailure` holding each failed item's error; nil when no item failed.
    public static func partialFailure(_ errors: [CKItemID: CKError], _ message: String) -> CKError? {
        guard !errors.isEmpty else { return nil }
        var error = CKError(.partialFailure, message)
        error.partialErrorsByItemID = errors
        return error
    }

    static func invalid(_ message: String) -> CKError { CKError(.invalidArguments, message) }
}
