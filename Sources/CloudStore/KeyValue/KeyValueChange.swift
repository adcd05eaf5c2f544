/// Why a key-value client's values changed without its own doing, with Apple's numbers
/// (`NSUbiquitousKeyValueStoreServerChange` … `NSUbiquitousKeyValueStoreAccountChange`).
public enum KeyValueChangeReason: Int, Sendable, CustomStringConvertible {
    /// Another client (a process, the CLI, the mount) changed these keys.
    case serverChange = 0
    /// The store could not be read when this client started; now it could, and these keys
    /// were loaded. Writes were refused until then.
    case initialSyncChange = 1
    /// A write of this client broke a limit and was dropped; the keys keep their
    /// stored values.
    case quotaViolationChange = 2
    /// The client now acts for another user; these keys differ between the two stores.
    case accountChange = 3

    public var description: String {
        switch self {
        case .serverChange: "serverChange"
        case .initialSyncChange: "initialSyncChange"
        case .quotaViolationChange: "quotaViolationChange"
        case .accountChange: "accountChange"
        }
    }
}

/// One did-change-externally event: the reason and the keys, sorted.
public struct KeyValueChange: Sendable, Equatable, CustomStringConvertible {
    public var reason: KeyValueChangeReason
    public var changedKeys: [String]

    public init(reason: KeyValueChangeReason, changedKeys: [String]) {
        self.reason = reason
        self.changedKeys = changedKeys.sorted()
    }

    public var description: String { "\(reason) \(changedKeys)" }
}
