/// Bytes as lower-case hex digits: checksums, key IDs, tokens. (`String(format: "%02x")` goes
/// through Foundation's formatter, which costs microseconds a byte in a server's hot path.)
public enum Hex {
    private static let digits = Array("0123456789abcdef".utf8)

    public static func string(_ bytes: some Sequence<UInt8>) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.underestimatedCount * 2)
        for b in bytes {
            out.append(digits[Int(b >> 4)])
            out.append(digits[Int(b & 0x0F)])
        }
        return String(decoding: out, as: UTF8.self)
    }
}
