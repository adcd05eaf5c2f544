import CloudStore
import Foundation

/// The containers and databases requests act on, kept from one request to the next: finding a
/// served container costs a listing of the store; the databases are the engine's
/// ``OpenDatabases``, as the mount keeps them.
///
/// `@unchecked Sendable`: `containers` is only touched under `lock`.
final class DatabaseCache: @unchecked Sendable {
    private let lock = NSLock()
    private var containers: [String: Container] = [:]
    /// The engine's cache of databases, as the mount keeps its own.
    private let databases = OpenDatabases()

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
        try databases.database(scope, in: container, caller: caller, environment: environment)
    }
}
