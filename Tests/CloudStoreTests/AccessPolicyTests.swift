import Foundation
import Testing
import TestSupport
@testable import CloudStore

/// Who may change what, as one table: database × change × who the caller is to the record ×
/// what the record is × the caller's share permission → allowed, leaves the share, or which
/// error. The policy is the one place the save path, `checkMayChange` and the mount ask.
@Suite struct AccessPolicyTests {
    enum Caller: String, CustomStringConvertible { case creator, other, otherWithRole; var description: String { rawValue } }
    enum Kind: String, CustomStringConvertible {
        case plain, unstamped, userRecord, root, share
        var description: String { rawValue }
    }
    enum Outcome: Equatable, CustomStringConvertible {
        case allowed, leavesShare, refused(CKError.Code)
        var description: String {
            switch self {
            case .allowed: "allowed"
            case .leavesShare: "leaves the share"
            case .refused(let code): "\(code)"
            }
        }
    }

    struct Row: CustomTestStringConvertible, Sendable {
        var scope: DatabaseScope
        var change: AccessPolicy.Change
        var caller: Caller
        var kind: Kind
        var permission: ShareInfo.Permission?
        var expected: Outcome
        var testDescription: String { "\(scope) \(change) by \(caller) of \(kind) with \(permission.map { "\($0)" } ?? "no share") → \(expected)" }
    }

    static let creator = "_creator", other = "_other", owner = "_owner"

    /// The record as the policy sees it.
    static func record(_ kind: Kind) -> Record {
        var r = Record(recordType: kind == .userRecord ? Schema.usersRecordType : (kind == .share ? ShareInfo.recordType : "Note"),
                       recordID: RecordID(recordName: "r", zoneID: ZoneID(zoneName: "Lists")))
        r.created = kind == .unstamped ? nil : Stamp(timestamp: 1, userRecordName: creator, deviceID: "d")
        r.parent = kind == .root ? "above" : nil
        if kind == .root { r.share = "s" }
        return r
    }

    static let rows: [Row] = {
        var rows: [Row] = []
        func row(_ scope: DatabaseScope, _ change: AccessPolicy.Change, _ caller: Caller, _ kind: Kind,
                 _ permission: ShareInfo.Permission?, _ expected: Outcome) {
            rows.append(Row(scope: scope, change: change, caller: caller, kind: kind, permission: permission, expected: expected))
        }
        // Private: the owner's own records.
        for change in [AccessPolicy.Change.update(parent: nil), .delete, .place, .cascade] {
            for kind in [Kind.plain, .root, .share] { row(.private, change, .creator, kind, nil, .allowed) }
        }
        // Public: the creator's, or a write role's; a user record is its user's and stays.
        row(.public, .update(parent: nil), .creator, .plain, nil, .allowed)
        row(.public, .delete, .creator, .plain, nil, .allowed)
        row(.public, .update(parent: nil), .other, .plain, nil, .refused(.permissionFailure))
        row(.public, .delete, .other, .plain, nil, .refused(.permissionFailure))
        row(.public, .update(parent: nil), .otherWithRole, .plain, nil, .allowed)
        row(.public, .delete, .otherWithRole, .plain, nil, .allowed)
        row(.public, .update(parent: nil), .other, .unstamped, nil, .allowed)
        row(.public, .delete, .other, .unstamped, nil, .allowed)
        row(.public, .update(parent: nil), .creator, .userRecord, nil, .allowed)
        row(.public, .delete, .creator, .userRecord, nil, .refused(.permissionFailure))
        row(.public, .update(parent: nil), .otherWithRole, .userRecord, nil, .refused(.permissionFailure))
        row(.public, .place, .other, .plain, nil, .allowed)
        row(.public, .cascade, .other, .plain, nil, .allowed)
        // Shared: what the shares grant.
        for change in [AccessPolicy.Change.update(parent: nil), .place] {
            row(.shared, change, .other, .plain, .readWrite, .allowed)
            row(.shared, change, .other, .plain, .readOnly, .refused(.permissionFailure))
            row(.shared, change, .other, .plain, nil, .refused(.permissionFailure))
        }
        row(.shared, .delete, .other, .plain, .readWrite, .allowed)
        row(.shared, .delete, .other, .plain, .readOnly, .refused(.permissionFailure))
        row(.shared, .delete, .other, .plain, nil, .refused(.unknownItem))
        row(.shared, .update(parent: nil), .other, .root, .readWrite, .allowed)
        row(.shared, .update(parent: "above"), .other, .root, .readWrite, .allowed)
        row(.shared, .update(parent: "elsewhere"), .other, .root, .readWrite, .refused(.permissionFailure))
        row(.shared, .delete, .other, .root, .readWrite, .refused(.permissionFailure))
        row(.shared, .update(parent: nil), .other, .share, .readOnly, .refused(.permissionFailure))
        row(.shared, .update(parent: nil), .other, .share, nil, .refused(.permissionFailure))
        row(.shared, .delete, .other, .share, .readOnly, .leavesShare)
        row(.shared, .delete, .other, .share, nil, .refused(.unknownItem))
        row(.shared, .place, .other, .share, nil, .allowed)
        row(.shared, .cascade, .other, .plain, .readWrite, .allowed)
        row(.shared, .cascade, .other, .plain, .readOnly, .refused(.permissionFailure))
        row(.shared, .cascade, .other, .root, .readWrite, .refused(.permissionFailure))
        return rows
    }()

    @Test(arguments: rows) func theTable(_ row: Row) throws {
        let caller = row.caller == .creator ? Self.creator : Self.other
        let policy = AccessPolicy(scope: row.scope, userRecordName: caller, ownerName: Self.owner) { _ throws(CKError) in
            row.caller == .otherWithRole
        }
        let outcome: Outcome
        do throws(CKError) {
            outcome = switch try policy.decide(row.change, Self.record(row.kind), permission: row.permission) {
            case .allowed: .allowed
            case .leavesShare: .leavesShare
            }
        } catch {
            outcome = .refused(error.code)
        }
        #expect(outcome == row.expected)
    }

    /// A participant never saves a share, in any database but its owner's private one.
    @Test func aShareIsChangedOnlyInItsOwnersPrivateDatabase() throws {
        for scope in [DatabaseScope.public, .shared] {
            let policy = AccessPolicy(scope: scope, userRecordName: Self.other, ownerName: Self.owner) { _ throws(CKError) in false }
            #expect(throws: CKError.self) { try policy.mayChangeShare("s") }
        }
        try AccessPolicy(scope: .private, userRecordName: Self.owner, ownerName: Self.owner) { _ throws(CKError) in false }.mayChangeShare("s")
    }
}

/// What a database object already made allows once its user is restricted: nothing that
/// changes the store. A long-lived mount or server keeps its databases (`OpenDatabases`), so
/// each change checks the account again.
@Suite struct RestrictedLaterTests {
    @Test func aUserRestrictedAfterTheDatabaseWasOpenedChangesNothing() throws {
        let t = try TempStore()
        let db = try t.db(.private, user: "alice")
        try db.createZone("Kept")
        _ = try db.save(record("before", zone: "Kept"))
        _ = try t.store.container().updateUser("alice", restricted: true)
        func code(_ body: () throws -> Void) -> CKError.Code? {
            do { try body(); return nil } catch { return (error as? CKError)?.code }
        }
        #expect(code { try db.createZone("Later") } == .notAuthenticated)
        #expect(code { try db.deleteZone("Kept") } == .notAuthenticated)
        #expect(code { _ = try db.save(record("after", zone: "Kept")) } == .notAuthenticated)
        #expect(try db.zones().map(\.zoneID.zoneName).contains("Kept"), "the zone stays")
    }
}
