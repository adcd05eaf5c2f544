import CloudStore

/// A server-to-server key as `ckfs key list` shows it.
public struct ServerKeyInfo: Sendable, Equatable {
    /// Hex SHA-256 of the key's DER form: what a client sends as `X-Apple-CloudKit-Request-KeyID`.
    public var keyID: String
    /// The identity the key acts as.
    public var userName: String
    /// Milliseconds since 1970.
    public var created: Int64
}
