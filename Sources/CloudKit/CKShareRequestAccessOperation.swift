import Foundation
import CloudStore

/// Asks the owners of shares for access as the caller (iOS 26): each share must allow access
/// requests (``CKShare/allowsAccessRequests``); its owner then adds, denies or blocks the
/// caller (``CKShare/requesters``).
open class CKShareRequestAccessOperation: CKOperation, @unchecked Sendable {
    public var shareURLs: [URL]?
    /// Each share's answer: success once the request waits for its owner.
    public var perShareAccessRequestResultBlock: ((URL, Result<Void, Error>) -> Void)?
    /// The end of the operation: a failure only when the whole operation failed.
    public var shareAccessRequestResultBlock: ((Result<Void, Error>) -> Void)?

    public override init() {}

    public convenience init(shareURLs: [URL]) {
        self.init()
        self.shareURLs = shareURLs
    }

    open override func main() {
        let container = self.container ?? CKContainer.default()
        for url in shareURLs ?? [] {
            do throws(CKError) {
                if isCancelled { throw CKError(.operationCancelled, "the operation was cancelled") }
                try container.requestShareAccess(url)
                perShareAccessRequestResultBlock?(url, .success(()))
            } catch {
                perShareAccessRequestResultBlock?(url, .failure(error))
            }
        }
        shareAccessRequestResultBlock?(isCancelled ? .failure(CKError(.operationCancelled, "the operation was cancelled")) : .success(()))
    }
}

extension CKContainer {
    /// Asks the owner of the share `url` names for access, as the caller.
    func requestShareAccess(_ url: URL) throws(CKError) {
        try engine().requestShareAccess(url: url.absoluteString, caller: caller, environment: environment)
    }

    /// Asks the owners of shares for access, as the caller: one result per URL, success once
    /// the request waits for the share's owner.
    public func requestShareAccess(for urls: [URL]) async throws -> [URL: Result<Void, any Error>] {
        _ = try engine()
        var out: [URL: Result<Void, any Error>] = [:]
        for url in urls {
            do throws(CKError) { try requestShareAccess(url); out[url] = .success(()) } catch { out[url] = .failure(error) }
        }
        return out
    }
}
