import CloudStore
import CloudStoreServerCore
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
        let assets = try AssetStaging(receiptLifetime: configuration.uploadLifetime)
        // The requests in flight have finished when `serve` returns; the router and what its
        // routes hold may outlive it a moment, so the folder is not left to `deinit`.
        defer { assets.removeFolder() }
        let api = WebAPI(store: store, configuration: configuration, assets: assets)
        let router = Self.router()
        api.addRoutes(to: router)
        // Uploads no save took are removed when their receipts expire, also while no request
        // comes to notice it.
        let expiry = Task.detached {
            while !Task.isCancelled {
                try? await Task.sleep(for: .seconds(min(60, max(1, configuration.uploadLifetime / 4))))
                assets.dropExpiredUploads()
            }
        }
        defer { expiry.cancel() }
        try await Self.serve(router, configuration: configuration, logger: logger, onListening: onListening)
    }

    /// The HTTP floor of `ckfs bench`: the same server (framework, middlewares, configuration)
    /// answering every request with `body` and doing nothing else.
    public static func runFloor(configuration: Configuration, body: [UInt8], logger: Logger,
                                onListening: @escaping @Sendable (String) -> Void) async throws {
        let router = Self.router()
        let answer: @Sendable (Request, WebRequestContext) async throws -> Response = { _, _ in
            Response(status: .ok, headers: [.contentType: "application/json; charset=utf-8"], body: .init(byteBuffer: ByteBuffer(bytes: body)))
        }
        router.post("**", use: answer)
        router.get("**", use: answer)
        try await serve(router, configuration: configuration, logger: logger, onListening: onListening)
    }

    private static func router() -> Router<WebRequestContext> {
        let router = Router(context: WebRequestContext.self)
        router.middlewares.add(RequestLogMiddleware())
        router.middlewares.add(UnknownEndpointMiddleware())
        // CloudKit JS in a browser page of another origin calls the server too.
        router.middlewares.add(CORSMiddleware(
            allowOrigin: .all,
            allowHeaders: [.contentType, .accept, .origin] + [RequestSignature.keyIDHeader, RequestSignature.dateHeader, RequestSignature.signatureHeader]
                .compactMap { HTTPField.Name($0) },
            allowMethods: [.get, .post, .options]))
        return router
    }

    private static func serve(_ router: Router<WebRequestContext>, configuration: Configuration, logger: Logger,
                              onListening: @escaping @Sendable (String) -> Void) async throws {
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
