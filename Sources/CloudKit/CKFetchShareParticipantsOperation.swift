import Foundation
import CloudStore

/// Finds participants for a share among the container's users, by email address or user
/// record ID; add them with ``CKShare/addParticipant(_:)``.
open class CKFetchShareParticipantsOperation: CKOperation, @unchecked Sendable {
    public var userIdentityLookupInfos: [CKUserIdentity.LookupInfo]?
    /// Each lookup's participant, or why none was found.
    public var perShareParticipantResultBlock: ((CKUserIdentity.LookupInfo, Result<CKShare.Participant, Error>) -> Void)?
    /// The end of the operation: a failure only when the whole operation failed.
    public var fetchShareParticipantsResultBlock: ((Result<Void, Error>) -> Void)?
    /// The older form of ``perShareParticipantResultBlock``: each participant found.
    public var shareParticipantFetchedBlock: ((CKShare.Participant) -> Void)?
    /// The older form of ``fetchShareParticipantsResultBlock``.
    public var fetchShareParticipantsCompletionBlock: ((Error?) -> Void)?

    public override init() {}

    public convenience init(userIdentityLookupInfos: [CKUserIdentity.LookupInfo]) {
        self.init()
        self.userIdentityLookupInfos = userIdentityLookupInfos
    }

    open override func main() {
        let container = self.container ?? CKContainer.default()
        var failed: CKError?
        for lookup in userIdentityLookupInfos ?? [] {
            do throws(CKError) {
                if isCancelled { throw CKError(.operationCancelled, "the operation was cancelled") }
                let participant = try container.shareParticipant(lookup)
                perShareParticipantResultBlock?(lookup, .success(participant))
                if perShareParticipantResultBlock == nil { shareParticipantFetchedBlock?(participant) }
            } catch {
                failed = failed ?? error
                perShareParticipantResultBlock?(lookup, .failure(error))
            }
        }
        fetchShareParticipantsResultBlock?(isCancelled ? .failure(CKError(.operationCancelled, "the operation was cancelled")) : .success(()))
        fetchShareParticipantsCompletionBlock?(failed)
    }
}
