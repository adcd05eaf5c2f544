import CloudStore
import Crypto
import Foundation

extension Container {
    /// Makes an API token for this container: 64 hex digits, as CloudKit's dashboard gives.
    public func createAPIToken() throws(CKError) -> String {
        let token = Self.randomHex(bytes: 32)
        try updateWebCredentials { (web: inout WebCredentials) throws(CKError) in
            web.apiTokens.append(.init(token: token, created: Store.now()))
        }
        return token
    }

    /// The container's API tokens, oldest first.
    public func apiTokens() throws(CKError) -> [String] { try webCredentials().apiTokens.map(\.token) }

    /// Removes an API token; `unknownItem` when the container has none such.
    public func removeAPIToken(_ token: String) throws(CKError) {
        try updateWebCredentials { (web: inout WebCredentials) throws(CKError) in
            guard web.apiTokens.contains(where: { $0.token == token }) else {
                throw CKError(.unknownItem, "container \(identifier) has no API token \(token); ckfs token list shows its tokens")
            }
            web.apiTokens.removeAll { $0.token == token }
        }
    }

    /// Who a request with these tokens acts as: `notAuthenticated` for an unknown API token,
    /// or a web auth token that is unknown or expired.
    public func webCaller(apiToken: String, webAuthToken: String?) throws(CKError) -> WebCaller {
        // As the file holds it now (one stat): tokens made or removed by another process count at once.
        let (web, restricted) = try webAccess()
        let session = webAuthToken.flatMap { t in web.webAuthTokens.first { $0.token == t } }
        guard web.apiTokens.contains(where: { $0.token == apiToken }) else {
            throw CKError(.notAuthenticated, "the API token is not one of container \(identifier)'s; make one with ckfs token create")
        }
        guard let webAuthToken else { return WebCaller(caller: .noAccount(deviceID: "web"), isServerKey: false) }
        guard let session, session.expires > Store.now() else {
            throw CKError(.notAuthenticated, "the web auth token is unknown or expired; sign in again with ckfs token sign-in --user NAME")
        }
        if restricted.contains(session.userName) {
            throw CKError(.notAuthenticated, "\(session.userName)'s account is restricted in container \(identifier) (ckfs user update --no-restricted allows it again)")
        }
        let device = "web-" + Hex.string(SHA256.hash(data: Data(webAuthToken.utf8)).prefix(6))
        return WebCaller(caller: Caller(userName: session.userName, deviceID: device), isServerKey: false)
    }
}
