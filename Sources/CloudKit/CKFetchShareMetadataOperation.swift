import Foundation
import CloudStore

/// Fetches what share URLs name: each share's metadata, and its root record when asked.
open class CKFetchShareMetadataOperation: CKOperation, @unchecked Sendable {
    public var shareURLs: [URL]?
    /// Fetch each hierarchy's root record too (ignored for zone-wide shares).
    public var shouldFetchRootRecord = false
    /// The root record's fields to fetch; nil: all of them.
    public var rootRecordDesiredKeys: [CKRecord.FieldKey]?
    /// Each URL's metadata, or why it could not be had.
    public var perShareMetadataResultBlock: ((URL, Result<CKShare.Metadata, Error>) -> Void)?
    /// The end of the operation: a failure only when the whole operation failed.
    public var fetchShareMetadataResultBlock: ((Result<Void, Error>) -> Void)?
    /// The older form of ``perShareMetadataResultBlock``.
    public var perShareMetadataBlock: ((URL, CKShare.Metadata?, Error?) -> Void)?
    /// The older form of ``fetchShareMetadataResultBlock``, with a `partialFailure` naming each URL that failed.
    public var fetchShareMetadataCompletionBlock: ((Error?) -> Void)?

    public override init() {}

    public convenience init(shareURLs: [URL]) {
        self.init()
        self.shareURLs = shareURLs
    }

    open override func main() {
        let container = self.container ?? CKContainer.default()
        var failures: [URL: CKError] = [:]
        for url in shareURLs ?? [] {
            do throws(CKError) {
                if isCancelled { throw CKError(.operationCancelled, "the operation was cancelled") }
                let metadata = try container.shareMetadata(url, fetchingRoot: shouldFetchRootRecord, desiredKeys: rootRecordDesiredKeys)
                perShareMetadataResultBlock?(url, .success(metadata))
                perShareMetadataBlock?(url, metadata, nil)
            } catch {
                failures[url] = error
                perShareMetadataResultBlock?(url, .failure(error))
                perShareMetadataBlock?(url, nil, error)
            }
        }
        fetchShareMetadataResultBlock?(isCancelled ? .failure(CKError(.operationCancelled, "the operation was cancelled")) : .success(()))
        fetchShareMetadataCompletionBlock?(CKError.partialFailure(byURL: failures, of: shareURLs?.count ?? 0, "share URLs could not be opened"))
    }
}
