import Crypto

enum AssetHasher {
    static func sha256Hex(_ bytes: [UInt8]) -> String {
        Hex.string(SHA256.hash(data: bytes))
    }

    /// Whether `name` is an asset's checksum as the store names asset files: 64 lower-case hex digits.
    static func isChecksum(_ name: String) -> Bool {
        name.utf8.count == 64 && name.utf8.allSatisfy { ($0 >= 48 && $0 <= 57) || ($0 >= 97 && $0 <= 102) }
    }
}
