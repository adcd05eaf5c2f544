import Foundation

/// A container: its identities, quotas, schema and databases.
///
/// What it keeps (`ContainerInfo`: `container.json` in the file backend) is read whole and
/// changed atomically through the backend's `ContainerStorage`; a miss (an identity another
/// process added) reads it again before answering.
///
/// `@unchecked Sendable`: its `var`s are behind `lock`.
public final class Container: @unchecked Sendable {
    public let identifier: String
    package let store: Store
    public let schema: Schema
    private let storage: any ContainerStorage

    /// Guards `info`, `version` and `checked`.
    private let lock = NSLock()
    private var info: ContainerInfo
    /// The version `info` was read from.
    private var version: ContainerVersion?
    /// When the file was last compared with `version`.
    private var checked = Date.distantPast

    init(store: Store, identifier: String) throws(CKError) {
        self.store = store
        self.identifier = identifier
        self.schema = Schema(storage: store.backend.schemaStorage(container: identifier))
        self.storage = store.backend.containerStorage(container: identifier)
        self.info = ContainerInfo(identifier: identifier, privateQuotaBytes: store.settings.privateQuotaBytes,
                                  publicQuotaBytes: store.settings.publicQuotaBytes)
        try storage.create(info)
        try reload()
    }

    /// What the container kept when last read.
    var current: ContainerInfo { lock.withLock { info } }

    /// What the container keeps now, read again only when another process changed it (one
    /// `stat` in the file backend); with `maxAge`, not even that when it was compared that
    /// recently.
    func fresh(maxAge: Double = 0) throws(CKError) -> ContainerInfo {
        if maxAge > 0, lock.withLock({ -checked.timeIntervalSinceNow < maxAge }) { return current }
        let now = storage.version()
        let same = lock.withLock { () -> Bool in
            checked = Date()
            return now != nil && version.map { $0 == now! } == true
        }
        return same ? current : try reload(version: now)
    }

    /// Reads what the container keeps; `seen` is its version if the caller just took it.
    @discardableResult
    func reload(version seen: ContainerVersion?? = nil) throws(CKError) -> ContainerInfo {
        // Taken before the read: a change in between only means one more read later.
        let stamp = seen ?? storage.version()
        guard let read = try storage.read() else { return current }
        lock.withLock {
            info = read
            version = stamp
            checked = Date()
        }
        return read
    }

    /// Changes what the container keeps atomically, from what is kept now. What it kept is
    /// held with no version: another process may have changed it since the storage let go,
    /// so the next ``fresh(maxAge:)`` reads it again rather than trust it.
    func update<T>(_ body: (inout ContainerInfo) throws(CKError) -> T) throws(CKError) -> T {
        let (result, kept) = try storage.update(fallback: current, body)
        lock.withLock {
            info = kept
            version = nil
        }
        return result
    }

    // MARK: Identities

    /// The identity `caller` acts as, enrolling it when the container allows that; nil: no account.
    public func identity(of caller: Caller) throws(CKError) -> Identity? {
        guard caller.hasAccount else { return nil }
        let read = try fresh()
        if let u = read.identity(of: caller) { return u }
        guard read.autoEnrol else { return nil }
        return try update { (info: inout ContainerInfo) throws(CKError) -> Identity? in
            if let u = info.identity(of: caller) { return u }
            guard info.autoEnrol else { return nil }
            guard info.users[caller.userName] == nil else {
                // The name is another uid's: this OS user gets no identity by itself.
                return nil
            }
            let u = Identity(name: caller.userName, userRecordName: Identity.newUserRecordName(), uid: caller.uid, created: Store.now())
            info.users[u.name] = u
            return u
        }
    }

    /// The caller's account status; never throws: an unreadable store is `couldNotDetermine`.
    public func accountStatus(of caller: Caller) -> AccountStatus {
        guard caller.hasAccount else { return .noAccount }
        do throws(CKError) {
            let read = try fresh()
            guard let u = read.identity(of: caller) else {
                return read.autoEnrol && read.users[caller.userName] == nil ? .available : .noAccount
            }
            return read.isRestricted(u) ? .restricted : .available
        } catch {
            return .couldNotDetermine
        }
    }

    /// The identity of a caller who must have an account that is not restricted.
    package func signedIn(_ caller: Caller, for purpose: String) throws(CKError) -> Identity {
        guard let u = try identity(of: caller) else {
            throw CKError(.notAuthenticated, caller.hasAccount
                ? "\(caller.userName)\(caller.uid.map { " (uid \($0))" } ?? "") has no identity in container \(identifier) (auto-enrolment is off, or the name is another uid's): \(purpose) needs one (ckfs user add NAME --uid N)"
                : "no account: \(purpose) needs an identity (act as one with --user NAME)")
        }
        // identity(of:) has just brought `current` up to date.
        guard !current.isRestricted(u) else {
            throw CKError(.notAuthenticated, "the account of \(u.name) is restricted in container \(identifier): \(purpose) is not allowed (remove it from settings.restrictedUsers in container.json)")
        }
        return u
    }

    /// The stable user record name of a local identity in this container, enrolled on first use.
    public func userRecordName(for userName: String) throws(CKError) -> String {
        try userRecordName(for: Caller(userName: userName))
    }

    public func userRecordName(for caller: Caller) throws(CKError) -> String {
        try signedIn(caller, for: "a private database").userRecordName
    }

    /// Local identities and their user record names.
    public func knownUsers() throws(CKError) -> [(name: String, userRecordName: String)] {
        try identities().map { ($0.name, $0.userRecordName) }
    }

    /// Every identity of the container, by name.
    public func identities() throws(CKError) -> [Identity] {
        try fresh().users.values.sorted { $0.name < $1.name }
    }

    /// Whether some identity may change every public record of `type`.
    /// Views ask this for every file they show, so it may answer from a read up to a second old.
    public func hasWriteRoles(for type: String) -> Bool {
        ((try? fresh(maxAge: 1)) ?? current).writeRoles[type]?.isEmpty == false
    }

    // MARK: Quotas

    /// Sets the quotas of this container: each user's private data and all public data.
    public func setQuotas(privateBytes: Int64?, publicBytes: Int64?) throws(CKError) {
        try update { (info: inout ContainerInfo) throws(CKError) in
            if let p = privateBytes { info.privateQuotaBytes = p }
            if let p = publicBytes { info.publicQuotaBytes = p }
        }
    }

    public var privateQuotaBytes: Int64 { current.privateQuotaBytes }
    public var publicQuotaBytes: Int64 { current.publicQuotaBytes }

    // MARK: Databases

    /// A database of this container as `caller` sees it: with no account (or a
    /// restricted one) the public database reads only and the private one is refused.
    public func database(_ scope: DatabaseScope, caller: Caller, environment: Environment = .development) throws(CKError) -> Database {
        guard scope != .shared else {
            throw .invalid("the shared database spans the zones of every user who shares with you: open it with sharedDatabase(caller:), and the zones of one owner with its database(owner:)")
        }
        if scope == .private {
            let u = try signedIn(caller, for: "the private database")
            return try Database(container: self, scope: scope, environment: environment, caller: caller, identity: u)
        }
        let u = try identity(of: caller)
        let usable = u.flatMap { current.isRestricted($0) ? nil : $0 }
        return try Database(container: self, scope: scope, environment: environment, caller: caller, identity: usable)
    }
}
