/// What lets a CloudKit Web Services client in (`ckfs serve`): the container's API tokens, the
/// web auth tokens of signed-in users, and the public halves of server-to-server keys.
///
/// Kept in `container.json` under `webServices`, with the identities they act as. The engine
/// reads, checks and writes them with the file; CloudStoreServerCore makes and checks them.
package struct WebCredentials: Sendable, Equatable {
    /// An API token: it names the container, and alone it reads the public database.
    package struct APIToken: Sendable, Equatable {
        package var token: String
        package var created: Int64

        package init(token: String, created: Int64) {
            self.token = token
            self.created = created
        }
    }

    /// A web auth token: with an API token it acts as `userName` until `expires`.
    package struct WebAuthToken: Sendable, Equatable {
        package var token: String
        package var userName: String
        /// Milliseconds since 1970.
        package var expires: Int64

        package init(token: String, userName: String, expires: Int64) {
            self.token = token
            self.userName = userName
            self.expires = expires
        }
    }

    /// The public half of a server-to-server key: it acts as `userName` on the public database.
    package struct ServerKey: Sendable, Equatable {
        package var keyID: String
        /// A PEM `PUBLIC KEY` block (EC, P-256).
        package var publicKey: String
        package var userName: String
        package var created: Int64

        package init(keyID: String, publicKey: String, userName: String, created: Int64) {
            self.keyID = keyID
            self.publicKey = publicKey
            self.userName = userName
            self.created = created
        }
    }

    /// A client's push token (`tokens/create`): once registered (`tokens/register`) its web
    /// courier URL delivers the user's notifications, from `position` on.
    package struct PushToken: Sendable, Equatable {
        package var token: String
        package var apnsEnvironment: String
        package var environment: Environment
        package var userName: String?
        /// The registering client's device ID: its own changes are not sent to it.
        package var deviceID: String?
        /// The notification token after the last notification delivered.
        package var position: String?
        package var created: Int64

        /// A token no user registered yet.
        package init(token: String, apnsEnvironment: String, environment: Environment, created: Int64) {
            self.token = token
            self.apnsEnvironment = apnsEnvironment
            self.environment = environment
            self.created = created
        }
    }

    package var apiTokens: [APIToken] = []
    package var webAuthTokens: [WebAuthToken] = []
    package var serverKeys: [ServerKey] = []
    package var pushTokens: [PushToken] = []

    package var isEmpty: Bool { apiTokens.isEmpty && webAuthTokens.isEmpty && serverKeys.isEmpty && pushTokens.isEmpty }

    func json() -> JSONValue {
        .object([
            "apiTokens": .array(apiTokens.map { .object(["token": .string($0.token), "created": .int($0.created)]) }),
            "webAuthTokens": .array(webAuthTokens.map {
                .object(["token": .string($0.token), "user": .string($0.userName), "expires": .int($0.expires)])
            }),
            "serverKeys": .array(serverKeys.map {
                .object(["keyID": .string($0.keyID), "publicKey": .string($0.publicKey), "user": .string($0.userName),
                         "created": .int($0.created)])
            }),
            "pushTokens": .array(pushTokens.map { t in
                var o: [String: JSONValue] = ["token": .string(t.token), "apnsEnvironment": .string(t.apnsEnvironment),
                                              "environment": .string(t.environment.rawValue), "created": .int(t.created)]
                if let u = t.userName { o["user"] = .string(u) }
                if let d = t.deviceID { o["device"] = .string(d) }
                if let p = t.position { o["position"] = .string(p) }
                return .object(o)
            }),
        ])
    }

    /// Reads `webServices`; `bad` makes the error for a wrong entry, naming it.
    init(json: JSONValue?, bad: (String) -> CKError) throws(CKError) {
        guard let json else { return }
        for (i, t) in (json["apiTokens"]?.arrayValue ?? []).enumerated() {
            guard let token = t["token"]?.stringValue, !token.isEmpty else { throw bad("webServices.apiTokens[\(i)] has no \"token\"") }
            apiTokens.append(APIToken(token: token, created: t["created"]?.int64Value ?? 0))
        }
        for (i, t) in (json["webAuthTokens"]?.arrayValue ?? []).enumerated() {
            guard let token = t["token"]?.stringValue, !token.isEmpty, let user = t["user"]?.stringValue, !user.isEmpty,
                  let expires = t["expires"]?.int64Value else {
                throw bad("webServices.webAuthTokens[\(i)] needs \"token\", \"user\" and \"expires\" (milliseconds since 1970)")
            }
            webAuthTokens.append(WebAuthToken(token: token, userName: user, expires: expires))
        }
        for (i, k) in (json["serverKeys"]?.arrayValue ?? []).enumerated() {
            guard let id = k["keyID"]?.stringValue, !id.isEmpty, let pem = k["publicKey"]?.stringValue,
                  let user = k["user"]?.stringValue, !user.isEmpty else {
                throw bad("webServices.serverKeys[\(i)] needs \"keyID\", \"publicKey\" (PEM) and \"user\"")
            }
            serverKeys.append(ServerKey(keyID: id, publicKey: pem, userName: user, created: k["created"]?.int64Value ?? 0))
        }
        for (i, t) in (json["pushTokens"]?.arrayValue ?? []).enumerated() {
            guard let token = t["token"]?.stringValue, !token.isEmpty,
                  let environment = Environment(rawValue: t["environment"]?.stringValue ?? "") else {
                throw bad("webServices.pushTokens[\(i)] needs \"token\" and \"environment\" (development or production)")
            }
            var pushToken = PushToken(token: token, apnsEnvironment: t["apnsEnvironment"]?.stringValue ?? "development",
                                      environment: environment, created: t["created"]?.int64Value ?? 0)
            pushToken.userName = t["user"]?.stringValue
            pushToken.deviceID = t["device"]?.stringValue
            pushToken.position = t["position"]?.stringValue
            pushTokens.append(pushToken)
        }
    }

    package init() {}
}
