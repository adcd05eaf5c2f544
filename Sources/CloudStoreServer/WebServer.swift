import CloudStore
import HTTPTypes
import Hummingbird
import Logging
import NIOCore

/// `ckfs serve`: CloudKit Web Services (protocol version 1) over HTTP on a store, so that a
/// client written for Apple's servers works against a local store by changing its base URL.
///
/// Requests run the same engine as the CLI and the mount, in the same store at the same time.
public struct WebServer: Sendable {
    public typealias Configuration = WebServerConfiguration

    let store: Store
    let configuration: Configuration
    let logger: Logger

    public init(store: Store, configuration: Configuration = Configuration(), logger: Logger) {
        self.store = store
        self.configuration = configuration
        self.logger = logger
    }

    /// Serves until SIGTERM or SIGINT; requests in flight finish first. `onListening` gets the
    /// base URL once the socket is bound (`http://127.0.0.1:8880`).
    public func run(onListening: @escaping @Sendable (String) -> Void) async throws {
        let api = WebAPI(store: store, configuration: configuration, assets: try AssetStaging())
        let router = Router(context: BasicRequestContext.self)
        router.middlewares.add(RequestLogMiddleware())
        // CloudKit JS in a browser page of another origin calls the server too.
        router.middlewares.add(CORSMiddleware(
            allowOrigin: .all,
            allowHeaders: [.contentType, .accept, .origin] + [RequestSignature.keyIDHeader, RequestSignature.dateHeader, RequestSignature.signatureHeader]
                .compactMap { HTTPField.Name($0) },
            allowMethods: [.get, .post, .options]))
        api.addRoutes(to: router)
        let host = configuration.host
        let app = Application(
            router: router,
            server: .http1(configuration: .init(idleTimeout: .seconds(Int64(configuration.idleTimeout)))),
            configuration: .init(address: .hostname(host, port: configuration.port), serverName: "ckfs"),
            onServerRunning: { channel in
                let port = channel.localAddress?.port ?? 0
                onListening("http://\(host):\(port)")
            },
            logger: logger)
        try await app.runService(gracefulShutdownSignals: [.sigterm, .sigint])
    }
}
