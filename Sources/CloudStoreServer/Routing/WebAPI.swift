import CloudStore
import CloudStoreServerCore
import Dispatch
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

/// The endpoints of CloudKit Web Services and what each request goes through: its body read
/// within bounds, its URL's container, environment and database, its credentials, then the
/// endpoint on a thread that may block (the engine's file I/O), then the JSON response.
struct WebAPI: Sendable {
    let store: Store
    let configuration: WebServerConfiguration
    let assets: AssetStaging
    let databases = DatabaseCache()
    let bodyDeadlines: BodyDeadlines

    init(store: Store, configuration: WebServerConfiguration, assets: AssetStaging) {
        self.store = store
        self.configuration = configuration
        self.assets = assets
        bodyDeadlines = BodyDeadlines(timeout: configuration.bodyTimeout)
    }

    /// Who may call an endpoint.
    enum Access {
        /// An API token alone reads the public database.
        case read
        /// Needs a signed-in user, or a server-to-server key on the public database.
        case user
        /// An API token, with a web auth token where the endpoint needs a user; never a
        /// server-to-server key (push tokens deliver a user's private notifications).
        case client
        /// A signed-in user through a web auth token; never a server-to-server key.
        case webUser
    }

    typealias Endpoint = @Sendable (WebCall) throws(CKError) -> JSONValue

    func addRoutes(to router: Router<WebRequestContext>) {
        let db = router.group("database/1/:container/:environment/:database")
        db.post("records/modify", use: handler(.user, RecordsEndpoints.modify))
        db.post("records/lookup", use: handler(.read, RecordsEndpoints.lookup))
        db.post("records/query", use: handler(.read, RecordsEndpoints.query))
        db.post("records/changes", use: handler(.user, ChangesEndpoints.recordChanges))
        db.post("records/resolve", use: handler(.user, SharingEndpoints.resolve))
        db.post("records/accept", use: handler(.user, SharingEndpoints.accept))
        db.post("changes/zone", use: handler(.user, ChangesEndpoints.zoneChanges))
        db.post("changes/database", use: handler(.user, ChangesEndpoints.databaseChanges))
        db.post("zones/changes", use: handler(.user, ChangesEndpoints.zonesChanges))
        db.get("zones/list", use: handler(.read, ZonesEndpoints.list))
        db.post("zones/lookup", use: handler(.read, ZonesEndpoints.lookup))
        db.post("zones/modify", use: handler(.user, ZonesEndpoints.modify))
        db.get("users/current", use: handler(.user, UsersEndpoints.current))
        db.get("users/caller", use: handler(.user, UsersEndpoints.caller))
        db.get("users/discover", use: handler(.user, UsersEndpoints.discoverAll))
        db.post("users/discover", use: handler(.user, UsersEndpoints.discover))
        db.post("users/lookup/email", use: handler(.user, UsersEndpoints.lookupByEmail))
        db.post("users/lookup/id", use: handler(.user, UsersEndpoints.lookupByID))
        db.post("users/lookup/contacts", use: handler(.user, UsersEndpoints.lookupContacts))
        db.get("subscriptions/list", use: handler(.user, SubscriptionsEndpoints.list))
        db.post("subscriptions/lookup", use: handler(.user, SubscriptionsEndpoints.lookup))
        db.post("subscriptions/modify", use: handler(.user, SubscriptionsEndpoints.modify))
        // Paths without a database, as on Apple's pages; also under a database and under
        // /device/1/, as some clients send them.
        let environment = router.group("database/1/:container/:environment")
        environment.post("subscriptions/lookup", use: handler(.user, SubscriptionsEndpoints.lookup))
        for group in [environment, db, router.group("device/1/:container/:environment")] {
            group.post("tokens/create", use: handler(.client, TokensEndpoints.create))
            group.post("tokens/register", use: handler(.webUser, TokensEndpoints.register))
        }
        let courier = WebCourier(store: store, configuration: configuration)
        router.get("webcourier/:container/:token") { request, context in await courier.respond(request, context) }
        db.post("assets/upload", use: handler(.user, AssetsEndpoints.upload))
        db.post("assets/rereference", use: handler(.user, AssetsEndpoints.rereference))
        let transfer = AssetTransfer(store: store, configuration: configuration, assets: assets, bodyDeadlines: bodyDeadlines)
        router.post("assets/upload/:slot") { request, context in await transfer.receive(request, context) }
        router.get("assets/download/:token") { request, context in await transfer.send(request, context) }
        // Apple's download URLs hold `${f}`, which clients replace with a file name.
        router.get("assets/download/:token/:file") { request, context in await transfer.send(request, context) }
        router.get("signin") { request, _ in Self.signInPage(request) }
    }

    /// The page `redirectURL` points at when a request needs a user: how to get a web auth token.
    static func signInPage(_ request: Request) -> Response {
        let container = request.uri.queryParameters["container"].map(String.init) ?? "CONTAINER"
        let text = """
            ckfs has no sign-in page of its own. Sign a user in from a shell on the machine that holds the store:

                ckfs token sign-in --user NAME --container \(container)

            It prints a web auth token. Send it with every request, percent-encoded, beside the API token:

                ?ckAPIToken=…&ckWebAuthToken=…

            """
        return Response(status: .ok, headers: [.contentType: "text/plain; charset=utf-8"], body: .init(byteBuffer: ByteBuffer(string: text)))
    }

    private func handler(_ access: Access, _ endpoint: @escaping Endpoint) -> @Sendable (Request, WebRequestContext) async throws -> Response {
        { request, context in
            let base = "http://" + (request.head.authority ?? "\(configuration.host):\(configuration.port)")
            // Where a request without a user is sent: made only for the answers that need it.
            func redirect() -> String { "\(base)/signin?container=\(context.parameters.get("container") ?? "")" }
            do {
                var request = request
                let body = try await RequestBody.read(&request, limit: configuration.maxBodyBytes, deadlines: bodyDeadlines, on: context.channel)
                let parameters = context.parameters
                // One hop to a thread that may block: the credentials and the endpoint both read files.
                let result = try await Self.blocking { [request] () throws(WebFailure) -> JSONValue in
                    let call = try prepare(request, parameters, body: body, access: access, baseURL: base)
                    do throws(CKError) { return try endpoint(call) } catch { throw WebFailure(error: error) }
                }
                return Self.json(result, status: .ok)
            } catch let failure as WebFailure {
                return Self.json(failure.dictionary(redirectURL: redirect()), status: failure.status)
            } catch let error as CKError {
                return Self.json(error.webServicesDictionary(redirectURL: redirect()), status: error.webServicesCode.status)
            }
        }
    }

    /// The URL's container, environment and database, the caller, and the JSON body.
    private func prepare(_ request: Request, _ parameters: Parameters, body: [UInt8], access: Access, baseURL: String) throws(WebFailure) -> WebCall {
        let containerID = parameters.get("container") ?? ""
        guard let environment = Environment(rawValue: parameters.get("environment") ?? "") else {
            throw WebFailure.badRequest("the environment in the URL must be development or production")
        }
        // Endpoints without a database segment (tokens, subscriptions/lookup) have none.
        var scope: DatabaseScope?
        if let databaseName = parameters.get("database") {
            guard let named = DatabaseScope(rawValue: databaseName) else {
                throw WebFailure.badRequest("the database in the URL must be public, private or shared, not \"\(databaseName)\"")
            }
            scope = named
        }
        let container = try databases.container(containerID, in: store, served: configuration.containers)
        let caller = try Self.authenticate(request, body: body, container: container)
        if caller.isServerKey {
            guard access != .client && access != .webUser else {
                throw WebFailure(error: CKError(.notAuthenticated, "push tokens are a web client's, for its signed-in user; use ckAPIToken (and ckWebAuthToken), not a server-to-server key"))
            }
            guard scope != .private && scope != .shared else {
                throw WebFailure(error: CKError(.notAuthenticated, "a server-to-server key reaches only the public database; the \(scope!.rawValue) database needs a signed-in user (ckWebAuthToken)"))
            }
            // Endpoints without a database segment look only in the key's one database.
            scope = .public
        }
        if (access == .user || access == .webUser || scope == .private || scope == .shared) && !caller.caller.hasAccount {
            throw WebFailure(error: CKError(.notAuthenticated, "this request needs a signed-in user: add ckWebAuthToken (ckfs token sign-in --user NAME) beside ckAPIToken"))
        }
        let json: JSONValue
        if body.allSatisfy({ $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 }) {
            json = .object([:])
        } else {
            do { json = try JSONParser.parse(body) } catch {
                throw WebFailure.badRequest("the request body is not JSON: \(error)")
            }
            guard case .object = json else { throw WebFailure.badRequest("the request body must be a JSON object, found \(json.kindName)") }
        }
        return WebCall(container: container, environment: environment, scope: scope, caller: caller, body: json, baseURL: baseURL,
                       assets: assets, databases: databases)
    }

    /// A signed request (server-to-server key) or `ckAPIToken` with an optional `ckWebAuthToken`.
    private static func authenticate(_ request: Request, body: [UInt8], container: Container) throws(WebFailure) -> WebCaller {
        let headers = request.headers
        func header(_ name: String) -> String? { HTTPField.Name(name).flatMap { headers[$0] } }
        if let keyID = header(RequestSignature.keyIDHeader) {
            guard let date = header(RequestSignature.dateHeader), let signature = header(RequestSignature.signatureHeader) else {
                throw .authentication("a signed request needs \(RequestSignature.dateHeader) and \(RequestSignature.signatureHeader) beside \(RequestSignature.keyIDHeader)")
            }
            let caller = try RequestSignature(keyID: keyID, date: date, signature: signature)
                .verify(body: body, path: request.uri.path, query: request.uri.query, container: container)
            return WebCaller(caller: caller, isServerKey: true)
        }
        let query = request.uri.queryParameters
        guard let apiToken = query["ckAPIToken"].map(String.init), !apiToken.isEmpty else {
            throw WebFailure(error: CKError(.notAuthenticated, "the request has no credentials: add ?ckAPIToken=… (ckfs token create), and ckWebAuthToken for a user, or sign it with a server-to-server key"))
        }
        let webAuthToken = query["ckWebAuthToken"].map(String.init).flatMap { $0.isEmpty ? nil : $0 }
        do throws(CKError) {
            return try container.webCaller(apiToken: apiToken, webAuthToken: webAuthToken)
        } catch {
            throw error.code == .notAuthenticated ? .authentication(error.message) : WebFailure(error: error)
        }
    }

    /// Runs engine work, which blocks on file I/O, on a thread of its own instead of the
    /// server's event loops.
    static func blocking<T: Sendable, E: Error>(_ body: @escaping @Sendable () throws(E) -> T) async throws(E) -> T {
        let result: Result<T, E> = await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                do throws(E) { continuation.resume(returning: .success(try body())) } catch { continuation.resume(returning: .failure(error)) }
            }
        }
        return try result.get()
    }

    static func json(_ value: JSONValue, status: HTTPResponse.Status) -> Response {
        Response(status: status, headers: [.contentType: "application/json; charset=utf-8"],
                 body: .init(byteBuffer: ByteBuffer(bytes: JSONWriter.compact(value))))
    }
}
