import ArgumentParser
import CloudStore

/// Where and as whom a command works, as plain values: what ``StoreOptions`` parses to, and what
/// ``DirectCommandLine`` reads without ArgumentParser. The checks and lookups are here, so both
/// ways of reading a command line share them.
struct StoreChoice {
    static let defaultEnvironment = CloudStore.Environment.development

    var store: String?
    var container: String?
    var user: String?
    var noAccount = false
    var environment = Self.defaultEnvironment
    var device: String?

    var storePath: String { store ?? Store.defaultPath }

    /// The store, read as a short-lived process reads it (a zone from its index file, not
    /// whole into memory) unless `reading` says otherwise.
    func openStore(reading: ZoneReading = .indexed) throws -> Store { try Store.open(at: storePath, reading: reading) }

    var userName: String { caller.userName }

    var deviceID: String {
        if let device, !device.isEmpty { return device }
        if let d = Syscall.environmentValue("CKFS_DEVICE_ID"), !d.isEmpty { return d }
        return Caller.processDeviceID
    }

    /// The named identity, no account, or this process's OS user (found by uid). A caller who
    /// may not act as others (see ``validate()``) is found by uid under `--user` too, so a name
    /// another uid holds in the container is not theirs.
    var caller: Caller {
        if noAccount { return .noAccount(deviceID: deviceID) }
        if let user { return Caller(userName: user, uid: mayActAsAnyone ? nil : Syscall.effectiveUserID, deviceID: deviceID) }
        return .osUser(deviceID: deviceID)
    }

    /// The uid owning the store's folder; nil when there is none.
    var storeOwner: UInt32? {
        guard case .success(let status?) = Syscall.stat(storePath, times: true) else { return nil }
        return status.owner
    }

    /// Root and the store's owner may act as any ckfs user (`--user NAME`): they can read the
    /// store's files anyway. Anyone else is only themselves.
    var mayActAsAnyone: Bool { Syscall.effectiveUserID == 0 || storeOwner == Syscall.effectiveUserID }

    func validate() throws {
        if noAccount && user != nil { throw ValidationError("--user and --no-account contradict each other; give one") }
        if let user, user.isEmpty { throw ValidationError("--user needs a name; use --no-account to act with none") }
        if let user, user != Caller.currentOSUserName, !mayActAsAnyone, !isOwnIdentity(user) {
            let owner = storeOwner.map { " (uid \($0))" } ?? ""
            throw ValidationError("--user \(user): only root or the store's owner\(owner) may act as another user; run as \(user)")
        }
    }

    /// Whether the container names this process's uid `name` (an identity added with
    /// `ckfs user add NAME --uid UID` under another name than the OS user's).
    private func isOwnIdentity(_ name: String) -> Bool {
        guard let store = try? Store.open(at: storePath), let identities = try? store.container(container).identities() else { return false }
        return identities.contains { $0.name == name && $0.uid == Syscall.effectiveUserID }
    }

    /// The options as ``DirectCommandLine`` reads them.
    static var directOptions: [DirectOption<Self>] { [
        .value("--store") { $0.store = $1; return true },
        .value("--container") { $0.container = $1; return true },
        .value("--user") { $0.user = $1; return true },
        .flag("--no-account") { $0.noAccount = true },
        .value("--environment") { choice, word in CloudStore.Environment(argument: word).map { choice.environment = $0 } != nil },
        .value("--device") { $0.device = $1; return true },
    ] }
}
