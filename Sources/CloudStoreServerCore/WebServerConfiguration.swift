/// Where `ckfs serve` listens and what it accepts.
public struct WebServerConfiguration: Sendable {
    public var host: String
    /// 0 picks a free port.
    public var port: Int
    /// A request body larger than this is refused before it is read further.
    public var maxBodyBytes: Int
    /// The largest asset file taken by an upload URL (Apple's limit: 50 MB).
    public var maxAssetBytes = 50 << 20
    /// A request whose body has not arrived whole after this many seconds is refused.
    public var bodyTimeout: Double
    /// A connection idle this long is closed.
    public var idleTimeout: Double
    /// The containers served; nil: every container of the store.
    public var containers: [String]?
    /// How long a web courier poll waits for a notification before it ends with 204.
    public var longPollSeconds: Double = 25
    /// How long an upload's receipt lasts, in seconds: its staged file is removed then if no
    /// save took it (one that did moved it into the zone already).
    public var uploadLifetime: Double = 3600

    public init(host: String = "127.0.0.1", port: Int = 8880, maxBodyBytes: Int = 16 << 20,
                bodyTimeout: Double = 30, idleTimeout: Double = 60) {
        self.host = host
        self.port = port
        self.maxBodyBytes = maxBodyBytes
        self.bodyTimeout = bodyTimeout
        self.idleTimeout = idleTimeout
    }
}
