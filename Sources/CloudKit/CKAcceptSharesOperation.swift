import Foundation
import CloudStore

/// Accepts shares as the caller: each one's records then show in the caller's shared database.
open class CKAcceptSharesOperation: CKOperation, @unchecked Sendable {
    public var shareMetadatas: [CKShare.Metadata]?
    /// Each share as accepted, or why it could not be.
    public var perShareResultBlock: ((CKShare.Metadata, Result<CKShare, Error>) -> Void)?
    /// The end of the operation: a failure only when the whole operation failed.
    public var acceptSharesResultBlock: ((Result<Void, Error>) -> Void)?
    /// The older form of ``perShareResultBlock``.
    public var perShareCompletionBlock: ((CKShare.Metadata, CKShare?, Error?) -> Void)?
    /// The older form of ``acceptSharesResultBlock``, with a `partialFailure` naming each share URL that failed.
    public var acceptSharesCompletionBlock: ((Error?) -> Void)?

    public override init() {}

    public convenience init(shareMetadatas: [CKShare.Metadata]) {
        self.init()
        self.shareMetadatas = shareMetadatas
    }

    open override func main() {
        let container = self.container ?? CKContainer.default()
        var failures: [URL: CKError] = [:]
        for metadata in shareMetadatas ?? [] {
            do throws(CKError) {
                if isCancelled { throw CKError(.operationCancelled, "the operation was cancelled") }
                let share = try container.acceptShare(metadata)
                perShareResultBlock?(metadata, .success(share))
                perShareCompletionBlock?(metadata, share, nil)
            } catch {
                failures[metadata.url] = error
                perShareResultBlock?(metadata, .failure(error))
                perShareCompletionBlock?(metadata, nil, error)
            }
        }
        acceptSharesResultBlock?(isCancelled ? .failure(CKError(.operationCancelled, "the operation was cancelled")) : .success(()))
        acceptSharesCompletionBlock?(CKError.partialFailure(byURL: failures, of: shareMetadatas?.count ?? 0, "shares could not be accepted"))
    }
}

extension CKError {
    /// A `partialFailure` naming each share URL that failed, and why.
    static func partialFailure(byURL failures: [URL: CKError], of count: Int, _ what: String) -> CKError? {
        guard !failures.isEmpty else { return nil }
        let each = failures.map { "\($0.key.absoluteString): \($0.value.message)" }.sorted().joined(separator: "; ")
        return CKError(.partialFailure, "\(failures.count) of \(count) \(what): \(each)")
    }
}
