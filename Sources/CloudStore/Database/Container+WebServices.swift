import Crypto
import Foundation

/// A server-to-server key as `ckfs key list` shows it.
public struct ServerKeyInfo: Sendable, Equatable {
    /// Hex SHA-256 of the key's DER form: what a client sends as `X-Apple-CloudKit-Request-KeyID`.
    public var keyID: String
    /// The identity the key acts as.
    public var userName: String
    /// Milliseconds since 1970.
    public var created: Int64
}

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

/// A registered push token: whose notifications it delivers, and from where.
public struct PushRegistration: Sendable, Equatable {
    public var userName: String
    public var deviceID: String?
    public var environment: Environment
    public var position: NotificationToken?
}

extension Container {
    /// How long a web auth token made by ``signIn(userName:lifetime:)`` lasts by default: two
    /// weeks, as CloudKit's "keep me signed in".
    public static let defaultWebAuthLifetime: Int64 = 14 * 24 * 3600
    /// Push tokens a container keeps: the oldest go first.
    static let maxPushTokens = 10_000
    static let maxUnregisteredPushTokens = 1_000

    /// The longest a web auth token may last: ten years.
    public static let maxWebAuthLifetime: Int64 = 10 * 366 * 24 * 3600

    /// Makes an API token for this container: 64 hex digits, as CloudKit's dashboard gives.
    public func createAPIToken() throws(CKError) -> String {
        let token = Self.randomHex(bytes: 32)
        try update { (info: inout ContainerInfo) throws(CKError) in
            info.web.apiTokens.append(.init(token: token, created: Store.now()))
        }
        return token
    }

    /// The container's API tokens, oldest first.
    public func apiTokens() throws(CKError) -> [String] { try fresh().web.apiTokens.map(\.token) }

    /// Removes an API token; `unknownItem` when the container has none such.
    public func removeAPIToken(_ token: String) throws(CKError) {
        try update { (info: inout ContainerInfo) throws(CKError) in
            guard info.web.apiTokens.contains(where: { $0.token == token }) else {
                throw CKError(.unknownItem, "container \(identifier) has no API token \(token); ckfs token list shows its tokens")
            }
            info.web.apiTokens.removeAll { $0.token == token }
        }
    }

    /// Signs `userName` in, as CloudKit's sign-in page does for a web client: a web auth token
    /// that acts as that identity for `lifetime` seconds. Expired tokens are dropped meanwhile.
    public func signIn(userName: String, lifetime: Int64 = Container.defaultWebAuthLifetime) throws(CKError) -> String {
        guard lifetime > 0, lifetime <= Self.maxWebAuthLifetime else {
            throw .invalid("a web auth token lasts from one second to ten years (\(Self.maxWebAuthLifetime) seconds)")
        }
        try requireIdentity(userName, for: "sign in")
        // Base64 with '=' (47 bytes) and often '+' and '/', as CloudKit's tokens: clients must
        // percent-encode them.
        var bytes = [UInt8](repeating: 0, count: 47)
        var generator = SystemRandomNumberGenerator()
        for i in bytes.indices { bytes[i] = generator.next() }
        let token = Data(bytes).base64EncodedString()
        let now = Store.now()
        try update { (info: inout ContainerInfo) throws(CKError) in
            info.web.webAuthTokens.removeAll { $0.expires <= now }
            info.web.webAuthTokens.append(.init(token: token, userName: userName, expires: now + lifetime * 1000))
        }
        return token
    }

    /// Registers the public half of a server-to-server key (a PEM `PUBLIC KEY`, or an EC
    /// private key whose public half is kept and nothing else) acting as `userName`; returns
    /// its key ID. Adding a key twice returns the same ID.
    public func addServerKey(pem: String, userName: String) throws(CKError) -> String {
        var found: P256.Signing.PublicKey?
        for block in Self.pemBlocks(pem) where found == nil {
            found = (try? P256.Signing.PublicKey(pemRepresentation: block)) ?? (try? P256.Signing.PrivateKey(pemRepresentation: block))?.publicKey
        }
        guard let publicKey = found else {
            throw .invalid("the key is not a PEM EC key on P-256 (prime256v1); make one with: openssl ecparam -name prime256v1 -genkey -noout -out eckey.pem")
        }
        try requireIdentity(userName, for: "own a server-to-server key")
        let keyID = Hex.string(SHA256.hash(data: publicKey.derRepresentation))
        try update { (info: inout ContainerInfo) throws(CKError) in
            guard !info.web.serverKeys.contains(where: { $0.keyID == keyID }) else { return }
            info.web.serverKeys.append(.init(keyID: keyID, publicKey: publicKey.pemRepresentation, userName: userName, created: Store.now()))
        }
        return keyID
    }

    /// The container's server-to-server keys, oldest first.
    public func serverKeys() throws(CKError) -> [ServerKeyInfo] {
        try fresh().web.serverKeys.map { ServerKeyInfo(keyID: $0.keyID, userName: $0.userName, created: $0.created) }
    }

    /// Revokes a server-to-server key; `unknownItem` when the container has none such.
    public func removeServerKey(_ keyID: String) throws(CKError) {
        try update { (info: inout ContainerInfo) throws(CKError) in
            guard info.web.serverKeys.contains(where: { $0.keyID == keyID }) else {
                throw CKError(.unknownItem, "container \(identifier) has no server-to-server key \(keyID); ckfs key list shows its keys")
            }
            info.web.serverKeys.removeAll { $0.keyID == keyID }
        }
    }

    /// The public key registered as `keyID` and the identity it acts as; nil when none is.
    public func serverKey(_ keyID: String) throws(CKError) -> (publicKey: P256.Signing.PublicKey, caller: Caller)? {
        // As the file holds it now (one stat): a revoked key stops working at once.
        let info = try fresh()
        guard let key = info.web.serverKeys.first(where: { $0.keyID == keyID }), let publicKey = try? P256.Signing.PublicKey(pemRepresentation: key.publicKey) else { return nil }
        if let identity = info.identity(of: Caller(userName: key.userName)), info.isRestricted(identity) {
            throw CKError(.notAuthenticated, "key \(keyID) acts as \(key.userName), whose account is restricted in container \(identifier)")
        }
        return (publicKey, Caller(userName: key.userName, deviceID: "key-" + keyID.prefix(12)))
    }

    /// Who a request with these tokens acts as: `notAuthenticated` for an unknown API token,
    /// or a web auth token that is unknown or expired.
    public func webCaller(apiToken: String, webAuthToken: String?) throws(CKError) -> WebCaller {
        // As the file holds it now (one stat): tokens made or removed by another process count at once.
        let info = try fresh()
        let web = info.web
        let session = webAuthToken.flatMap { t in web.webAuthTokens.first { $0.token == t } }
        guard web.apiTokens.contains(where: { $0.token == apiToken }) else {
            throw CKError(.notAuthenticated, "the API token is not one of container \(identifier)'s; make one with ckfs token create")
        }
        guard let webAuthToken else { return WebCaller(caller: .noAccount(deviceID: "web"), isServerKey: false) }
        guard let session, session.expires > Store.now() else {
            throw CKError(.notAuthenticated, "the web auth token is unknown or expired; sign in again with ckfs token sign-in --user NAME")
        }
        if let identity = info.identity(of: Caller(userName: session.userName)), info.isRestricted(identity) {
            throw CKError(.notAuthenticated, "\(session.userName)'s account is restricted in container \(identifier) (ckfs user update --no-restricted allows it again)")
        }
        let device = "web-" + Hex.string(SHA256.hash(data: Data(webAuthToken.utf8)).prefix(6))
        return WebCaller(caller: Caller(userName: session.userName, deviceID: device), isServerKey: false)
    }

    // MARK: Push tokens

    /// Makes a push token for a web client (`tokens/create`); it delivers nothing until a
    /// user registers it.
    public func createPushToken(apnsEnvironment: String, environment: Environment) throws(CKError) -> String {
        guard apnsEnvironment == "development" || apnsEnvironment == "production" else {
            throw .invalid("\"apnsEnvironment\" must be development or production")
        }
        let token = Self.randomHex(bytes: 32)
        let now = Store.now()
        try update { (info: inout ContainerInfo) throws(CKError) in
            // An API token alone makes these (it may sit in a public web page): tokens never
            // registered go after an hour, and the file keeps at most so many of them.
            var tokens = info.web.pushTokens.filter { $0.userName != nil || $0.created > now - 3_600_000 }
            let unregistered = tokens.filter { $0.userName == nil }
            if unregistered.count >= Self.maxUnregisteredPushTokens, let oldest = unregistered.min(by: { $0.created < $1.created }) {
                tokens.removeAll { $0.token == oldest.token }
            }
            if tokens.count >= Self.maxPushTokens, let oldest = tokens.min(by: { $0.created < $1.created }) {
                tokens.removeAll { $0.token == oldest.token }
            }
            tokens.append(.init(token: token, apnsEnvironment: apnsEnvironment, environment: environment, created: now))
            info.web.pushTokens = tokens
        }
        return token
    }

    /// Registers a push token for the identity `caller` acts as (`tokens/register`): from now
    /// on, the notifications of that identity after this moment, but for those of the
    /// caller's own changes.
    public func registerPushToken(_ token: String, caller: Caller) throws(CKError) {
        let identity = try signedIn(caller, for: "register for notifications")
        try update { (info: inout ContainerInfo) throws(CKError) in
            guard let i = info.web.pushTokens.firstIndex(where: { $0.token == token }) else {
                throw CKError(.unknownItem, "push token \(token) was not made here; make one with tokens/create first")
            }
            let environment = info.web.pushTokens[i].environment
            let position = try notificationLog(userRecordName: identity.userRecordName, environment: environment).changes().token
            info.web.pushTokens[i].userName = identity.name
            info.web.pushTokens[i].deviceID = caller.deviceID
            info.web.pushTokens[i].position = position.text
        }
    }

    /// Whether `token` was made by ``createPushToken(apnsEnvironment:environment:)`` and not
    /// dropped since, registered or not.
    public func isPushToken(_ token: String) throws(CKError) -> Bool {
        try fresh().web.pushTokens.contains { $0.token == token }
    }

    /// Where a registered push token delivers from; nil when the token is unknown or not registered.
    public func pushRegistration(_ token: String) throws(CKError) -> PushRegistration? {
        guard let t = try fresh().web.pushTokens.first(where: { $0.token == token }), let user = t.userName else { return nil }
        return PushRegistration(userName: user, deviceID: t.deviceID, environment: t.environment,
                                position: t.position.map(NotificationToken.init(text:)))
    }

    /// Notes that a push token's notifications were delivered up to `position`.
    public func advancePushToken(_ token: String, to position: NotificationToken) throws(CKError) {
        try update { (info: inout ContainerInfo) throws(CKError) in
            guard let i = info.web.pushTokens.firstIndex(where: { $0.token == token }) else { return }
            info.web.pushTokens[i].position = position.text
        }
    }

    private func requireIdentity(_ userName: String, for purpose: String) throws(CKError) {
        guard !userName.isEmpty else { throw .invalid("a user name is needed to \(purpose)") }
        guard try identity(of: Caller(userName: userName)) != nil else {
            throw CKError(.notAuthenticated, "container \(identifier) has no identity \(userName) to \(purpose), and does not enrol new ones; add it with ckfs user add \(userName)")
        }
    }

    /// The PEM blocks of a file, each with its Base64 wrapped at 64 columns as swift-crypto
    /// reads it (some tools write longer lines, and `openssl ecparam` puts an `EC PARAMETERS`
    /// block first).
    static func pemBlocks(_ text: String) -> [String] {
        var blocks: [String] = []
        var label: String?
        var body = ""
        for line in text.split(whereSeparator: \.isNewline).map({ $0.trimmingCharacters(in: .whitespaces) }) {
            if line.hasPrefix("-----BEGIN "), line.hasSuffix("-----") {
                label = String(line.dropFirst(11).dropLast(5))
                body = ""
            } else if let open = label, line == "-----END \(open)-----" {
                var wrapped: [Substring] = []
                var rest = Substring(body)
                while !rest.isEmpty {
                    wrapped.append(rest.prefix(64))
                    rest = rest.dropFirst(64)
                }
                blocks.append((["-----BEGIN \(open)-----"] + wrapped.map(String.init) + ["-----END \(open)-----"]).joined(separator: "\n"))
                label = nil
            } else if label != nil {
                body += line
            }
        }
        return blocks
    }

    private static func randomHex(bytes count: Int) -> String {
        var generator = SystemRandomNumberGenerator()
        return Hex.string((0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) })
    }
}
