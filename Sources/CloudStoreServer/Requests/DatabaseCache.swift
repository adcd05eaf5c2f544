import CloudStore
import Foundation

/// The containers and databases requests act on, kept from one request to the next, as the
/// mount keeps its own: finding a container costs a listing of the store, and making a
/// database a `stat` and an identity lookup. A database re-checks what can change under it
/// (restriction, ownership) on every save.
///
/// `@unchecked Sendable`: `containers` and `databases` are only touched under `lock`.
final class DatabaseCache: @unchecked Sendable {
    private struct Key: Hashable {
        var container: String
        var environment: Environment
        var scope: DatabaseScope
        var userName: String
        var deviceID: String
    }

    /// Past this many databases (one per signed-in client and database), the cache starts again.
    static let limit = 10_000

    private let lock = NSLock()
    private var containers: [String: Container] = [:]
    private var databases: [Key: Database] = [:]

    /// The store's container `id`, when the store has it (and the server serves it).
    func container(_ id: String, in store: Store, served: [String]?) throws(WebFailure) -> Container {
        if let c = lock.withLock({ containers[id] }) { return c }
        let known: [String]
        do throws(CKError) { known = try store.containerIdentifiers() } catch { throw WebFailure(error: error) }
        guard known.contains(id), served?.contains(id) ?? true else {
            throw WebFailure.badRequest("the store has no container \"\(id)\"; it has \((served ?? known).joined(separator: ", ")) (ckfs init --default-container ID makes one)")
        }
        let container: Container
        do throws(CKError) { container = try store.container(id) } catch { throw WebFailure(error: error) }
        lock.withLock { containers[id] = container }
        return container
    }

    func database(_ container: Container, _ scope: DatabaseScope, caller: Caller, environment: Environment) throws(CKError) -> Database {
        let key = Key(container: container.identifier, environment: environment, scope: scope, userName: caller.userName, deviceID: caller.deviceID)
        if let db = lock.withLock({ databases[key] }) { return db }
        let db = try container.database(scope, caller: caller, environment: environment)
        lock.withLock {
            if databases.count >= Self.limit { databases.removeAll() }
            databases[key] = db
        }
        return db
    }
}
