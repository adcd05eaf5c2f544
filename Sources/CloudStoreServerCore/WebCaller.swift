import CloudStore

/// Who a CloudKit Web Services request acts as, once its credentials are checked.
public struct WebCaller: Sendable, Equatable {
    /// The identity, or a caller with no account (an API token alone).
    public var caller: Caller
    /// Whether a server-to-server key signed the request: it reaches the public database only.
    public var isServerKey: Bool

    public init(caller: Caller, isServerKey: Bool) {
        self.caller = caller
        self.isServerKey = isServerKey
    }
}
