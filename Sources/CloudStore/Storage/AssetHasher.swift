import Crypto

enum AssetHasher {
    static func sha256Hex(_ bytes: [UInt8]) -> String {
        Hex.string(SHA256.hash(data: bytes))
    }
}
