import CloudStore
import Crypto
import Foundation

extension Container {
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
        try updateWebCredentials { (web: inout WebCredentials) throws(CKError) in
            guard !web.serverKeys.contains(where: { $0.keyID == keyID }) else { return }
            web.serverKeys.append(.init(keyID: keyID, publicKey: publicKey.pemRepresentation, userName: userName, created: Store.now()))
        }
        return keyID
    }

    /// The container's server-to-server keys, oldest first.
    public func serverKeys() throws(CKError) -> [ServerKeyInfo] {
        try webCredentials().serverKeys.map { ServerKeyInfo(keyID: $0.keyID, userName: $0.userName, created: $0.created) }
    }

    /// Revokes a server-to-server key; `unknownItem` when the container has none such.
    public func removeServerKey(_ keyID: String) throws(CKError) {
        try updateWebCredentials { (web: inout WebCredentials) throws(CKError) in
            guard web.serverKeys.contains(where: { $0.keyID == keyID }) else {
                throw CKError(.unknownItem, "container \(identifier) has no server-to-server key \(keyID); ckfs key list shows its keys")
            }
            web.serverKeys.removeAll { $0.keyID == keyID }
        }
    }

    /// The public key registered as `keyID` and the identity it acts as; nil when none is.
    public func serverKey(_ keyID: String) throws(CKError) -> (publicKey: P256.Signing.PublicKey, caller: Caller)? {
        // As the file holds it now (one stat): a revoked key stops working at once.
        let (web, restricted) = try webAccess()
        guard let key = web.serverKeys.first(where: { $0.keyID == keyID }), let publicKey = try? P256.Signing.PublicKey(pemRepresentation: key.publicKey) else { return nil }
        if restricted.contains(key.userName) {
            throw CKError(.notAuthenticated, "key \(keyID) acts as \(key.userName), whose account is restricted in container \(identifier)")
        }
        return (publicKey, Caller(userName: key.userName, deviceID: "key-" + keyID.prefix(12)))
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
}
