import CloudStore
import CloudStoreServerCore
import Crypto
import Foundation

/// A server-to-server request's signature, checked as CloudKit's Web Services describe it: an
/// ECDSA P-256 signature (SHA-256, DER, Base64) of `date:base64(sha256(body)):path`, made with
/// the private half of a key registered by `ckfs key add`.
struct RequestSignature {
    static let keyIDHeader = "X-Apple-CloudKit-Request-KeyID"
    static let dateHeader = "X-Apple-CloudKit-Request-ISO8601Date"
    static let signatureHeader = "X-Apple-CloudKit-Request-SignatureV1"
    /// How far a request's date may be from the server's clock, in seconds: a captured request
    /// cannot be replayed after this.
    static let dateTolerance: Double = 600

    var keyID: String
    var date: String
    var signature: String

    /// Checks the signature over `body` as received and `path` (the path alone, then with its
    /// query: clients differ on which they sign); returns who the key acts as.
    func verify(body: [UInt8], path: String, query: String?, container: Container, now: Date = Date()) throws(WebFailure) -> Caller {
        guard let when = Self.parseDate(date) else {
            throw .authentication("\(Self.dateHeader) \"\(date)\" is not an ISO 8601 UTC time such as 2016-01-25T22:15:43Z")
        }
        guard abs(when.timeIntervalSince(now)) <= Self.dateTolerance else {
            throw .authentication("\(Self.dateHeader) \(date) is more than \(Int(Self.dateTolerance / 60)) minutes from the server's time; sign each request when it is sent, with the machine's clock set right")
        }
        let found: (publicKey: P256.Signing.PublicKey, caller: Caller)?
        do throws(CKError) { found = try container.serverKey(keyID) } catch { throw WebFailure(error: error) }
        guard let (publicKey, caller) = found else {
            throw .authentication("key \(keyID) is not a server-to-server key of container \(container.identifier); register its public half with ckfs key add FILE.pem")
        }
        guard let bytes = Data(base64Encoded: signature),
              let sig = (try? P256.Signing.ECDSASignature(derRepresentation: bytes)) ?? (try? P256.Signing.ECDSASignature(rawRepresentation: bytes)) else {
            throw .authentication("\(Self.signatureHeader) is not a Base64 ECDSA signature")
        }
        // A request without a body is signed over the hash of no bytes; MistKit leaves the
        // hash out instead (`date::path`), and that is taken too: it names the same request.
        var bodyHashes = [Data(SHA256.hash(data: body)).base64EncodedString()]
        if body.isEmpty { bodyHashes.append("") }
        var subpaths = [path]
        if let query, !query.isEmpty { subpaths.append(path + "?" + query) }
        for bodyHash in bodyHashes {
            for subpath in subpaths where publicKey.isValidSignature(sig, for: Data("\(date):\(bodyHash):\(subpath)".utf8)) {
                return caller
            }
        }
        throw .authentication("the signature does not verify: sign \"\(date):<Base64 SHA-256 of the body>:\(path)\" with the private key of \(keyID)")
    }

    /// `2016-01-25T22:15:43Z`, with or without fractions of a second.
    static func parseDate(_ text: String) -> Date? {
        let plain = ISO8601DateFormatter()
        if let d = plain.date(from: text) { return d }
        let fractional = ISO8601DateFormatter()
        fractional.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return fractional.date(from: text)
    }
}
