import ArgumentParser
import CloudStore
import CloudStoreServerCore
import Logging

/// The options of `ckfs serve`. `ckfs` shows and checks them, and ckfs-server, which the
/// command becomes, parses the same arguments with this same declaration.
public struct ServeOptions: ParsableArguments {
    @Option(help: "The store directory (env CKFS_STORE; default $XDG_DATA_HOME/ckfs or ~/.local/share/ckfs).")
    public var store: String?

    @Option(help: "Serve only this container (default: every container of the store).")
    public var container: String?

    @Option(help: "The address to listen on.")
    public var host = "127.0.0.1"

    @Option(help: "The port to listen on; 0 picks a free one.")
    public var port = 8880

    @Option(help: "The largest request body taken, in bytes.")
    public var maxBody = WebServerConfiguration().maxBodyBytes

    @Option(help: "How long a request's body may take to arrive, in seconds; a slower one is refused (408).")
    public var bodyTimeout = WebServerConfiguration().bodyTimeout

    @Option(help: "How long a web courier poll waits for a notification, in seconds, before it ends with 204.")
    public var longPollSeconds = WebServerConfiguration().longPollSeconds

    @Option(help: "How long an upload (assets/upload) waits for a save to take it, in seconds, before it is removed.")
    public var uploadLifetime = WebServerConfiguration().uploadLifetime

    @Option(help: "The log level: trace, debug, info, notice, warning, error or critical (env CKFS_LOG_LEVEL; default info).")
    public var logLevel: Logger.Level?

    public init() {}

    public func validate() throws {
        guard (0...65535).contains(port) else { throw ValidationError("--port must be between 0 and 65535") }
        guard maxBody > 0 else { throw ValidationError("--max-body must be at least 1 byte") }
        guard bodyTimeout > 0, bodyTimeout <= 3600 else { throw ValidationError("--body-timeout must be more than 0 and at most 3600 seconds") }
        guard longPollSeconds > 0, longPollSeconds <= 3600 else { throw ValidationError("--long-poll-seconds must be more than 0 and at most 3600 seconds") }
        guard uploadLifetime > 0, uploadLifetime <= 86400 else { throw ValidationError("--upload-lifetime must be more than 0 and at most 86400 seconds") }
    }

    /// What the web server is asked to serve.
    public var configuration: WebServerConfiguration {
        var configuration = WebServerConfiguration(host: host, port: port, maxBodyBytes: maxBody, bodyTimeout: bodyTimeout)
        configuration.containers = container.map { [$0] }
        configuration.longPollSeconds = longPollSeconds
        configuration.uploadLifetime = uploadLifetime
        return configuration
    }
}
