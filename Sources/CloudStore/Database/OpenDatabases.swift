import Foundation

/// The databases a long-running process (the mount, the server) keeps from one request to the
/// next, by container, environment, scope and caller: making one costs a `stat` and an identity
/// lookup. A kept database re-checks what can change under it (restriction, ownership) on every
/// save, so keeping it changes no answer. One made for a named caller the container has no
/// identity for is not kept, since the user may be added meanwhile; past ``limit`` databases
/// the cache starts again.
///
/// `@unchecked Sendable`: `databases` is only touched under `lock`.
package final class OpenDatabases: @unchecked Sendable {
    private struct Key: Hashable {
        var container: String
        var environment: Environment
        var scope: DatabaseScope
        /// Whose zones, in the shared database; nil in the others.
        var owner: String?
        var userName: String
        var uid: UInt32?
        var deviceID: String
    }

    /// Past this many databases (one per caller and database), the cache starts again.
    package let limit: Int
    private let lock = NSLock()
    private var databases: [Key: Database] = [:]

    package init(limit: Int = 10_000) { self.limit = limit }

    /// The database of `scope` in `container` as `caller`, made once while it may be kept; in
    /// the shared database, `owner`'s zones (by user name or record name), as
    /// ``SharedDatabase/database(owner:)`` gives them.
    package func database(_ scope: DatabaseScope, in container: Container, owner: String? = nil, caller: Caller,
                          environment: Environment) throws(CKError) -> Database {
        let key = Key(container: container.identifier, environment: environment, scope: scope,
                      owner: scope == .shared ? owner : nil, userName: caller.userName, uid: caller.uid, deviceID: caller.deviceID)
        if let db = lock.withLock({ databases[key] }) { return db }
        let db = if scope == .shared, let owner {
            try container.sharedDatabase(caller: caller, environment: environment).database(owner: owner)
        } else {
            try container.database(scope, caller: caller, environment: environment)
        }
        if db.identity != nil || caller.userName.isEmpty {
            lock.withLock {
                if databases.count >= limit { databases.removeAll() }
                databases[key] = db
            }
        }
        return db
    }
}
