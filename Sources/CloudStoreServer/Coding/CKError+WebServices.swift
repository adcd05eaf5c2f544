import CloudStore
import Foundation
import HTTPTypes

/// CloudKit Web Services' name and HTTP status for each ``CKError`` code: the one place the
/// server maps the engine's errors.
extension CKError {
    /// The `serverErrorCode` and status Apple's Web Services give this error.
    var webServicesCode: (serverErrorCode: String, status: HTTPResponse.Status) {
        switch code {
        case .serverRecordChanged: ("CONFLICT", .conflict)
        case .unknownItem, .assetFileNotFound: ("NOT_FOUND", .notFound)
        case .zoneNotFound: ("ZONE_NOT_FOUND", .notFound)
        case .permissionFailure: ("ACCESS_DENIED", .forbidden)
        case .notAuthenticated: ("AUTHENTICATION_REQUIRED", .init(code: 421, reasonPhrase: "Misdirected Request"))
        case .quotaExceeded: ("QUOTA_EXCEEDED", .contentTooLarge)
        case .referenceViolation: ("VALIDATING_REFERENCE_ERROR", .preconditionFailed)
        case .batchRequestFailed: ("ATOMIC_ERROR", .badRequest)
        case .constraintViolation: ("CONFLICT", .conflict)
        case .zoneBusy, .operationCancelled: ("TRY_AGAIN_LATER", .serviceUnavailable)
        case .internalError: ("INTERNAL_ERROR", .internalServerError)
        // invalidArguments, limitExceeded (no code of Apple's says it), changeTokenExpired,
        // badContainer, badDatabase, serverRejectedRequest and anything newer.
        default: ("BAD_REQUEST", .badRequest)
        }
    }

    /// The error dictionary of a whole request that failed (`uuid`, `serverErrorCode`,
    /// `reason`, and `redirectURL` when a user must sign in).
    func webServicesDictionary(redirectURL: String? = nil) -> JSONValue {
        var o: [String: JSONValue] = [
            "uuid": .string(UUID().uuidString.lowercased()),
            "serverErrorCode": .string(webServicesCode.serverErrorCode),
            "reason": .string(message),
        ]
        if code == .notAuthenticated, let redirectURL { o["redirectURL"] = .string(redirectURL) }
        // Apple's error dictionaries: without `retryAfter` the operation cannot be retried.
        if webServicesCode.serverErrorCode == "TRY_AGAIN_LATER" || retryAfterSeconds != nil {
            o["retryAfter"] = .int(Int64((retryAfterSeconds ?? 1).rounded(.up)))
        }
        return .object(o)
    }
}

/// A whole request refused with an HTTP status, and a credentials failure that CloudKit names
/// `AUTHENTICATION_FAILED` (401): rejected credentials, which ``CKError`` has no code for.
struct WebFailure: Error {
    var error: CKError
    var authenticationFailed: Bool
    /// The HTTP status, where it says more than the code's own (413 for a body too large).
    var statusOverride: HTTPResponse.Status?

    init(error: CKError, authenticationFailed: Bool = false, status: HTTPResponse.Status? = nil) {
        self.error = error
        self.authenticationFailed = authenticationFailed
        self.statusOverride = status
    }

    var serverErrorCode: String { authenticationFailed ? "AUTHENTICATION_FAILED" : error.webServicesCode.serverErrorCode }
    var status: HTTPResponse.Status { statusOverride ?? (authenticationFailed ? .unauthorized : error.webServicesCode.status) }

    static func authentication(_ reason: String) -> WebFailure {
        WebFailure(error: CKError(.notAuthenticated, reason), authenticationFailed: true)
    }

    static func badRequest(_ reason: String) -> WebFailure {
        WebFailure(error: CKError(.invalidArguments, reason))
    }

    func dictionary(redirectURL: String?) -> JSONValue {
        var o = error.webServicesDictionary(redirectURL: authenticationFailed ? nil : redirectURL)
        if case .object(var members) = o {
            members["serverErrorCode"] = .string(serverErrorCode)
            o = .object(members)
        }
        return o
    }
}
