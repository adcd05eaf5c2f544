import CloudStore
import Crypto
import Foundation

extension Container {
    /// How long a web auth token made by ``signIn(userName:lifetime:)`` lasts by default: two
    /// weeks, as CloudKit's "keep me signed in".
    public static let defaultWebAuthLifetime: Int64 = 14 * 24 * 3600
    /// The longest a web auth token may last: ten years.
    public static let maxWebAuthLifetime: Int64 = 10 * 366 * 24 * 3600

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
        try updateWebCredentials { (web: inout WebCredentials) throws(CKError) in
            web.webAuthTokens.removeAll { $0.expires <= now }
            web.webAuthTokens.append(.init(token: token, userName: userName, expires: now + lifetime * 1000))
        }
        return token
    }

    /// Refuses a name the container has no identity for (and would not enrol).
    func requireIdentity(_ userName: String, for purpose: String) throws(CKError) {
        guard !userName.isEmpty else { throw .invalid("a user name is needed to \(purpose)") }
        guard try identity(of: Caller(userName: userName)) != nil else {
            throw CKError(.notAuthenticated, "container \(identifier) has no identity \(userName) to \(purpose), and does not enrol new ones; add it with ckfs user add \(userName)")
        }
    }

    /// `count` random bytes as hex: API tokens and push tokens.
    static func randomHex(bytes count: Int) -> String {
        var generator = SystemRandomNumberGenerator()
        return Hex.string((0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) })
    }
}
