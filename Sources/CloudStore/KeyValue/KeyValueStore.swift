import Foundation

/// A client of one user's key-value store, shaped like `NSUbiquitousKeyValueStore`.
///
/// ```swift
/// let kv = try KeyValueStore(store: store)
/// try kv.setValue(.integer(42), forKey: "page")
/// try kv.sync()                          // on disk now, and survives a crash
/// kv.value(forKey: "page")               // .integer(42)
/// for await change in kv.changes() { print(change.reason, change.changedKeys) }
/// ```
///
/// Writes go to memory first and reach disk on ``sync()`` (or `synchronize()`) or within
/// `synchronizeEvery` seconds by themselves. Each sync also takes in what other clients
/// wrote, and a timer does the same, so their changes arrive on their own as
/// ``KeyValueChangeReason/serverChange`` with the keys that changed. A client never
/// hears of its own writes. Where two clients set one key, the later sync wins, as in iCloud.
///
/// A write that breaks a limit (``KeyValueLimits``) fails, changes nothing and raises
/// ``KeyValueChangeReason/quotaViolationChange`` for this client only.
///
/// An `NSObject`, as Apple's class is; unlike it, `final`: a subclass could keep state outside
/// `lock`, and Swift on Linux cannot override what the class's extensions declare.
///
/// `@unchecked Sendable`: `lock` guards every `var`, and `syncLock` serializes syncs.
public final class KeyValueStore: NSObject, @unchecked Sendable {
    public let containerIdentifier: String
    public let environment: Environment
    let container: Container?
    public let limits: KeyValueLimits

    private struct PendingWrite {
        var value: PropertyListValue?
        var sequence: UInt64
    }

    /// Held for a whole sync, so syncs (timer, callers, account switch) run one at a time.
    /// Taken before `lock` (docs/Durability.md#lock-orders).
    private let syncLock = NSLock()
    /// Guards every `var` below.
    private let lock = NSLock()
    private var userName: String
    private var file: (any KeyValueStorage)?
    /// What is on disk as last read or written, and that version's identity.
    private var base: [String: PropertyListValue] = [:]
    private var seen: KeyValueVersion?
    /// Whether the store was read at least once; until then writes are refused.
    private var loaded = false
    /// `base` with the pending writes applied: what this client reads.
    private var values: KeyValueEntries
    private var pending: [String: PendingWrite] = [:]
    private var nextSequence: UInt64 = 1
    private var failure: CKError?
    private var subscribers: [UInt64: AsyncStream<KeyValueChange>.Continuation] = [:]
    private var nextSubscriber: UInt64 = 0
    private var timer: DispatchSourceTimer?

    /// Notifications go out here, one at a time and in order, never on the caller's thread.
    private let delivery = DispatchQueue(label: "ckfs.keyvalue.delivery")

    /// The store of `user` (nil: the OS user) in container `containerIdentifier` (nil: the
    /// store's default). `synchronizeEvery` seconds a timer writes pending changes and looks
    /// for others' (nil: only on ``sync()``).
    public convenience init(store: Store, containerIdentifier: String? = nil, user: String? = nil, environment: Environment = .development,
                            synchronizeEvery interval: Double? = 1.0) throws(CKError) {
        try self.init(store: store, containerIdentifier: containerIdentifier, caller: user.map { Caller(userName: $0) } ?? Caller.osUser(),
                      environment: environment, synchronizeEvery: interval)
    }

    /// The store of the identity `caller` acts as; with no account it fails with `notAuthenticated`.
    public convenience init(store: Store, containerIdentifier: String? = nil, caller: Caller, environment: Environment = .development,
                            synchronizeEvery interval: Double? = 1.0) throws(CKError) {
        self.init(opened: .success(try Opened(store: store, containerIdentifier: containerIdentifier, caller: caller, environment: environment)),
                  synchronizeEvery: interval)
    }

    /// A client of its own of the OS user's store in the default store's default container,
    /// as `NSUbiquitousKeyValueStore()` is on Apple's platforms (see ``default``).
    public override convenience init() {
        let opened = Result { () throws(CKError) in
            try Opened(store: Store.create(at: Store.defaultPath), containerIdentifier: nil, caller: Caller.osUser(), environment: .development)
        }
        self.init(opened: opened, synchronizeEvery: 1.0)
    }

    /// What a client holds of its store once opened.
    private struct Opened {
        var container: Container
        var limits: KeyValueLimits
        var userName: String
        var environment: Environment
        var file: any KeyValueStorage

        init(store: Store, containerIdentifier: String?, caller: Caller, environment: Environment) throws(CKError) {
            container = try store.container(containerIdentifier)
            limits = store.settings.keyValueLimits
            userName = caller.userName
            self.environment = environment
            file = try container.keyValueStorage(caller: caller, environment: environment)
        }
    }

    /// A client of the store `opened`, or, when it could not be opened, one whose every read is
    /// empty and every write fails with that error.
    private init(opened: Result<Opened, CKError>, synchronizeEvery interval: Double?) {
        switch opened {
        case .success(let o):
            container = o.container
            containerIdentifier = o.container.identifier
            environment = o.environment
            limits = o.limits
            values = KeyValueEntries([:], limits: o.limits)
            userName = o.userName
            file = o.file
        case .failure(let error):
            containerIdentifier = ""
            environment = .development
            container = nil
            limits = KeyValueLimits()
            values = KeyValueEntries([:], limits: limits)
            userName = ""
            failure = error
        }
        super.init()
        guard case .success = opened else { return }
        do { try load() } catch { failure = error }
        if let interval { startTimer(interval) }
    }

    deinit {
        timer?.cancel()
        for c in subscribers.values { c.finish() }
    }

    /// The client of the OS user in the default store's default container
    /// (`NSUbiquitousKeyValueStore.default`). The store is `CKFS_STORE`, else
    /// `$XDG_DATA_HOME/ckfs`, else `~/.local/share/ckfs`, made when missing.
    public static let `default` = KeyValueStore()

    /// The local identity whose store this client shows.
    public var user: String { lock.withLock { userName } }

    /// Why the last write or sync failed, if it did.
    public var lastError: CKError? { lock.withLock { failure } }

    /// Posted (object: the client) when others' writes, a refused write, a late first read or
    /// a user switch changed what this client sees; Apple's `NSUbiquitousKeyValueStore` posts
    /// the notification of this name.
    public static let didChangeExternallyNotification = Notification.Name("NSUbiquitousKeyValueStoreDidChangeExternallyNotification")
    /// `userInfo` key of ``didChangeExternallyNotification``: the reason, an `Int`
    /// (``KeyValueChangeReason``'s raw value).
    public static let changeReasonKey = "NSUbiquitousKeyValueStoreChangeReasonKey"
    /// `userInfo` key of ``didChangeExternallyNotification``: the changed keys, `[String]`.
    public static let changedKeysKey = "NSUbiquitousKeyValueStoreChangedKeysKey"

    // MARK: Reading

    /// The value of `key`, or nil.
    public func value(forKey key: String) -> PropertyListValue? { lock.withLock { values[key] } }

    public subscript(key: String) -> PropertyListValue? { value(forKey: key) }

    /// Every key and value this client sees.
    public var entries: [String: PropertyListValue] { lock.withLock { values.values } }

    // MARK: Writing

    /// Sets `key` to `value` in memory; ``sync()`` or the timer writes it. Dates are cut to
    /// whole seconds, as the store keeps them. Fails, changing nothing, for a bad key, a
    /// value no property list can hold, or a broken limit; a broken limit also raises
    /// ``KeyValueChangeReason/quotaViolationChange`` for this client.
    public func setValue(_ value: PropertyListValue, forKey key: String) throws(CKError) {
        let value = Self.normalized(value)
        do {
            try limits.checkKey(key)
            try ensureLoaded()
            lock.lock()
            defer { lock.unlock() }
            try values.set(value, forKey: key)
            pending[key] = PendingWrite(value: value, sequence: nextSequence)
            nextSequence += 1
            failure = nil
        } catch {
            refused(error, key: key)
            throw error
        }
    }

    /// Removes `key` in memory; ``sync()`` or the timer writes it.
    public func removeValue(forKey key: String) throws(CKError) {
        do {
            try limits.checkKey(key)
            try ensureLoaded()
        } catch {
            refused(error, key: key)
            throw error
        }
        lock.withLock {
            values.remove(key)
            pending[key] = PendingWrite(value: nil, sequence: nextSequence)
            nextSequence += 1
        }
    }

    package func noteFailure(_ error: CKError) { lock.withLock { failure = error } }

    private func refused(_ error: CKError, key: String) {
        noteFailure(error)
        if error.code == .limitExceeded || error.code == .quotaExceeded {
            post(KeyValueChange(reason: .quotaViolationChange, changedKeys: [key]))
        }
    }

    static func normalized(_ value: PropertyListValue) -> PropertyListValue {
        switch value {
        case .date(let d): .date(PropertyListValue.wholeSeconds(d))
        case .array(let items): .array(items.map(normalized))
        case .dictionary(let members): .dictionary(members.mapValues(normalized))
        default: value
        }
    }

    // MARK: Syncing

    /// Writes pending changes durably and takes in other clients' changes. When this
    /// returns, every write made before it survives a crash, except the ones it returns: writes
    /// that no longer fit once merged with others' are dropped, as iCloud drops them, and
    /// announced as ``KeyValueChangeReason/quotaViolationChange``. The result maps each dropped
    /// key to a `quotaExceeded` error saying why, for a caller that must know its write stood
    /// (`ckfs kv set`); a sync by the timer drops writes the same way and only announces them.
    @discardableResult
    public func sync() throws(CKError) -> [String: CKError] {
        syncLock.lock()
        defer { syncLock.unlock() }
        do {
            let dropped = try syncLocked()
            lock.withLock { failure = dropped.isEmpty ? nil : dropped.sorted { $0.key < $1.key }.first?.value }
            return dropped
        } catch {
            lock.withLock { failure = error }
            throw error
        }
    }

    /// Sync lock held. Returns the dropped writes (see ``sync()``).
    private func syncLocked() throws(CKError) -> [String: CKError] {
        guard let file = lock.withLock({ file }) else { throw lock.withLock { failure } ?? CKError(.internalError, "no key-value store") }
        if !lock.withLock({ loaded }) {
            try load()
            return [:]
        }
        let (writes, last) = lock.withLock { () -> ([(String, PendingWrite)], UInt64) in
            (pending.sorted { $0.value.sequence < $1.value.sequence }, nextSequence - 1)
        }
        if writes.isEmpty {
            let now = try file.version()
            if now == lock.withLock({ seen }) { return [:] }
            adopt(try file.read(), appliedUpTo: 0, dropped: [], reason: .serverChange)
            return [:]
        }
        var dropped: [String: CKError] = [:]
        let (snapshot, _) = try file.update { (entries: inout KeyValueEntries) throws(CKError) in
            dropped = [:]
            for (key, write) in writes {
                guard let value = write.value else {
                    entries.remove(key)
                    continue
                }
                // Checked when set; only the store's limits can fail here, once merged with others' writes.
                do throws(CKError) { try entries.set(value, forKey: key) } catch {
                    dropped[key] = CKError(.quotaExceeded, "the write of \"\(key.prefix(80))\" was dropped, not stored: other clients' writes reached the store after this client read it, and \(error.message)")
                }
            }
        }
        adopt(snapshot, appliedUpTo: last, dropped: Array(dropped.keys), reason: .serverChange)
        return dropped
    }

    /// Reads the store for the first time (or again after it could not be read).
    private func load() throws(CKError) {
        guard let file = lock.withLock({ file }) else { return }
        let snapshot = try file.read()
        // Only called while not loaded: a failure kept means an earlier read failed, so the
        // keys arrive late and are announced; the first read at start announces nothing.
        adopt(snapshot, appliedUpTo: 0, dropped: [], reason: .initialSyncChange, announce: lock.withLock { failure } != nil)
        lock.withLock {
            loaded = true
            failure = nil
        }
    }

    private func ensureLoaded() throws(CKError) {
        if lock.withLock({ loaded }) { return }
        syncLock.lock()
        defer { syncLock.unlock() }
        if lock.withLock({ loaded }) { return }
        try load()
    }

    /// Takes `snapshot` as what is on disk: the writes up to sequence `appliedUpTo` are in it
    /// (or were `dropped`), later ones stay pending. Announces the keys whose value this
    /// client sees changed.
    private func adopt(_ snapshot: KeyValueSnapshot, appliedUpTo: UInt64, dropped: [String],
                       reason: KeyValueChangeReason, announce: Bool = true) {
        let changed = lock.withLock { () -> [String] in
            base = snapshot.entries
            seen = snapshot.version
            pending = pending.filter { $0.value.sequence > appliedUpTo }
            let old = values
            var now = base
            for (key, write) in pending { now[key] = write.value }
            values = KeyValueEntries(now, limits: limits, reusing: old)
            return Set(old.values.keys).union(now.keys).filter { old[$0] != now[$0] }
        }
        let droppedSet = Set(dropped)
        let others = changed.filter { !droppedSet.contains($0) }
        if announce, !others.isEmpty { post(KeyValueChange(reason: reason, changedKeys: others)) }
        if !dropped.isEmpty { post(KeyValueChange(reason: .quotaViolationChange, changedKeys: dropped)) }
    }

    /// Acts for another local identity from now on: pending writes are written to the old
    /// store first, then the new user's store replaces everything this client sees, and the
    /// keys that differ are announced as ``KeyValueChangeReason/accountChange``.
    public func switchUser(to name: String) throws(CKError) {
        guard let container else { throw lock.withLock { failure } ?? CKError(.internalError, "no key-value store") }
        syncLock.lock()
        defer { syncLock.unlock() }
        if lock.withLock({ loaded && !pending.isEmpty }) { _ = try syncLocked() }
        let newFile = try container.keyValueStorage(user: name, environment: environment)
        let snapshot = try newFile.read()
        lock.withLock {
            file = newFile
            userName = name
            pending = [:]
            loaded = true
            failure = nil
        }
        adopt(snapshot, appliedUpTo: .max, dropped: [], reason: .accountChange)
    }

    private func startTimer(_ interval: Double) {
        let t = DispatchSource.makeTimerSource(queue: DispatchQueue(label: "ckfs.keyvalue.timer"))
        t.schedule(deadline: .now() + interval, repeating: interval, leeway: .milliseconds(50))
        t.setEventHandler { [weak self] in _ = try? self?.sync() }
        lock.withLock { timer = t }
        t.resume()
    }

    // MARK: Notifications

    /// Every did-change-externally event from now on, as an async sequence.
    public func changes() -> AsyncStream<KeyValueChange> {
        let (stream, continuation) = AsyncStream<KeyValueChange>.makeStream(bufferingPolicy: .unbounded)
        let id = lock.withLock { () -> UInt64 in
            nextSubscriber += 1
            subscribers[nextSubscriber] = continuation
            return nextSubscriber
        }
        continuation.onTermination = { [weak self] _ in
            guard let self else { return }
            _ = self.lock.withLock { self.subscribers.removeValue(forKey: id) }
        }
        return stream
    }

    private func post(_ change: KeyValueChange) {
        delivery.async { [weak self] in
            guard let self else { return }
            NotificationCenter.default.post(name: Self.didChangeExternallyNotification, object: self, userInfo: [
                Self.changeReasonKey: change.reason.rawValue,
                Self.changedKeysKey: change.changedKeys,
            ])
            for c in self.lock.withLock({ Array(self.subscribers.values) }) { c.yield(change) }
        }
    }
}
