/// May this caller make this change to this record in this database: the one place that
/// answers it, for the private, public and shared databases alike.
///
/// - Private: the owner's own records; every change is theirs to make.
/// - Public: anyone signed in creates; a record is changed or deleted by its creator, or by an
///   identity the container gives a write role for its type (`ckfs user role`); a user record
///   is its user's and is never deleted. A record without a creator's stamp is anyone's.
/// - Shared: what the owner's shares grant the caller. Read-write reaches change and delete; a
///   shared hierarchy's root is its owner's to move or delete; a record outside every hierarchy
///   shared with the caller is not there for them; deleting a share leaves it.
///
/// The policy decides from facts its callers gather (the stored record, the caller's permission
/// in a shared zone, a write role) and keeps no state. A save asks it for each stored record
/// as soon as it reads it, before anything else tells of that record; account checks (signed
/// in, not restricted) come before, in `Database.writer`.
struct AccessPolicy {
    /// A change to a record the policy rules on.
    enum Change: Equatable {
        /// A save over the stored record; `parent` is the parent the client gives it.
        case update(parent: String?)
        /// A delete of the stored record.
        case delete
        /// A record a save puts where it lands (new, or moved): in a shared zone, in a hierarchy
        /// shared with the caller read-write.
        case place
        /// A record a delete takes along through a DELETE_SELF reference.
        case cascade
    }

    /// What the caller's change does when it may make it.
    enum Decision: Equatable {
        case allowed
        /// A participant's delete of a share: they leave it, and it stays for the others.
        case leavesShare
    }

    var scope: DatabaseScope
    /// The caller's user record name.
    var userRecordName: String
    /// Whose zones these are, for the errors' advice.
    var ownerName: String
    /// Whether the container gives the caller a write role for a record type, as its file
    /// says now; asked only when a public record is another's.
    var hasWriteRole: (String) throws(CKError) -> Bool

    /// Whether the caller may make `change` to `record` (stored, or as it will be saved for
    /// `.place`); `permission` is the caller's in a shared zone, nil where nothing shares it
    /// with them. Throws CloudKit's error for a change refused.
    func decide(_ change: Change, _ record: Record, permission: ShareInfo.Permission?) throws(CKError) -> Decision {
        switch scope {
        case .private: return .allowed
        case .public: return try decidePublic(change, record)
        case .shared: return try decideShared(change, record, permission: permission)
        }
    }

    private func decidePublic(_ change: Change, _ record: Record) throws(CKError) -> Decision {
        let isUserRecord = record.recordType == Schema.usersRecordType
        switch change {
        case .place, .cascade: return .allowed
        case .update, .delete: break
        }
        if change == .delete && isUserRecord {
            throw CKError(.permissionFailure, "user record \(record.recordID.recordName) cannot be deleted; it lives as long as its user")
        }
        guard let creator = record.created?.userRecordName, creator != userRecordName else { return .allowed }
        if !isUserRecord, try hasWriteRole(record.recordType) { return .allowed }
        throw CKError(.permissionFailure, "record \(record.recordID.recordName) in the public database belongs to its creator (\(creator)); only the creator, or a user with a write role for \(record.recordType) (ckfs user role), may change or delete it")
    }

    private func decideShared(_ change: Change, _ record: Record, permission: ShareInfo.Permission?) throws(CKError) -> Decision {
        let name = record.recordID.recordName
        switch change {
        case .update(let parent):
            // A name taken by a record not shared with the caller: refused as a save outside
            // the hierarchy is, telling nothing of that record.
            guard let permission else { throw outsideShares(name) }
            if record.isShare { try mayChangeShare(name) }
            guard permission == .readWrite else { throw readOnly(name) }
            if record.share != nil, let parent, parent != record.parent {
                throw CKError(.permissionFailure, "record \(name) is the root of a shared hierarchy; only its owner (\(ownerName)) may move it")
            }
            return .allowed
        case .delete:
            guard permission != nil else { throw notShared(name, zone: record.recordID.zoneID.zoneName) }
            if record.isShare { return .leavesShare }
            guard permission == .readWrite else { throw readOnly(name) }
            guard record.share == nil else {
                throw CKError(.permissionFailure, "record \(name) is the root of a shared hierarchy; only its owner (\(ownerName)) may delete it")
            }
            return .allowed
        case .place:
            guard record.isShare || permission == .readWrite else { throw outsideShares(name) }
            return .allowed
        case .cascade:
            guard record.share == nil, permission == .readWrite else {
                throw CKError(.permissionFailure, "the delete would also delete, through DELETE_SELF references, records not shared with you read-write; ask the owner (\(ownerName)) to delete it")
            }
            return .allowed
        }
    }

    /// Whether the caller may save the share `name`: a share is its owner's, saved in their
    /// private database; a participant leaves it by deleting it.
    func mayChangeShare(_ name: String) throws(CKError) {
        guard scope == .private else {
            throw CKError(.permissionFailure, "share \(name) can be changed only by its owner (\(ownerName)); to leave it, delete it from your shared database")
        }
    }

    private func readOnly(_ name: String) -> CKError {
        CKError(.permissionFailure, "record \(name) is shared with you read-only; ask its owner (\(ownerName)) for read-write permission")
    }

    /// A save that would put a record outside every hierarchy shared with the caller read-write.
    func outsideShares(_ name: String) -> CKError {
        CKError(.permissionFailure, "record \(name) would not be in a hierarchy shared with you read-write: set its parent to a record of the share (CKRecord.setParent), or ask its owner (\(ownerName)) for read-write permission")
    }

    /// A record the caller cannot reach in a shared zone: it is not there for them.
    func notShared(_ name: String, zone: String) -> CKError {
        CKError(.unknownItem, "record \(name) does not exist in zone \(zone) shared with you by \(ownerName), or is not in a hierarchy shared with you")
    }
}
