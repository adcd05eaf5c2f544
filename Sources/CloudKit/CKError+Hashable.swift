import Foundation
import CloudStore

/// CKError is `Hashable`, as Apple's: two errors are equal when they have the same code,
/// message, time to wait and partial errors, so code can compare errors or keep them in sets.
extension CKError: Hashable {
    public static func == (a: CKError, b: CKError) -> Bool {
        a.code == b.code && a.message == b.message && a.retryAfterSeconds == b.retryAfterSeconds && a.partialErrors == b.partialErrors
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(code)
        hasher.combine(message)
    }
}
