import CloudStore
import Foundation

/// OS users and the store's identities as the view shows them: a caller's uid to the local
/// identity it acts as, an identity to the uid that owns its folders, and a public record's
/// creator to the uid shown as its owner. Lookups read /etc/passwd and ask nscd (3 opens and 6
/// stats each), and every attribute of a private folder asks one, so what is found is kept.
///
/// `@unchecked Sendable`: `lock` guards every `var`. A leaf: lookups run with it released.
final class UserTable: @unchecked Sendable {
    private let store: Store
    /// The uid shown where no local user is found: the daemon's.
    let fallbackUID: UInt32
    private let lock = NSLock()
    private var namesByUID: [UInt32: String] = [:]
    private var uidsByName: [String: UInt32] = [:]
    private var uidsByUserRecord: [String: [String: UInt32]] = [:]

    init(store: Store, fallbackUID: UInt32) {
        self.store = store
        self.fallbackUID = fallbackUID
    }

    /// The local identity of a uid: its OS user name (as the CLI uses), else `uid<N>`.
    func userName(_ uid: UInt32) -> String {
        if let n = lock.withLock({ namesByUID[uid] }) { return n }
        let name = Syscall.userName(uid: uid) ?? "uid\(uid)"
        lock.withLock { namesByUID[uid] = name }
        return name
    }

    /// The uid of the OS user `name`, or N for a name `uid<N>` (``userName(_:)``'s name for a
    /// uid with no user); nil when there is neither.
    func uid(ofUserNamed name: String) -> UInt32? {
        if let known = lock.withLock({ uidsByName[name] }) { return known }
        guard let found = Syscall.uid(ofUserNamed: name) ?? (name.hasPrefix("uid") ? UInt32(name.dropFirst(3)) : nil) else { return nil }
        lock.withLock { uidsByName[name] = found }
        return found
    }

    /// The uid shown as owner of a public record: its creator's, when the creator is a local
    /// user of `container`.
    func uid(ofCreator userRecordName: String?, container: String) -> UInt32 {
        guard let userRecordName else { return fallbackUID }
        if let known = lock.withLock({ uidsByUserRecord[container]?[userRecordName] }) { return known }
        var map: [String: UInt32] = [:]
        if let users = try? store.container(container).identities() {
            for u in users { map[u.userRecordName] = u.uid ?? uid(ofUserNamed: u.name) ?? fallbackUID }
        }
        lock.withLock { uidsByUserRecord[container] = map }
        return map[userRecordName] ?? fallbackUID
    }
}
