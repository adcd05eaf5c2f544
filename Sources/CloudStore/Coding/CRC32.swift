/// CRC-32C (Castagnoli), table-driven, for framing zone log entries (and naming lost+found files).
public enum CRC32C {
    private static let table: [UInt32] = (0..<256).map { i -> UInt32 in
        var c = UInt32(i)
        for _ in 0..<8 { c = (c & 1) != 0 ? (0x82F6_3B78 ^ (c >> 1)) : (c >> 1) }
        return c
    }

    public static func checksum(_ bytes: some Sequence<UInt8>) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        table.withUnsafeBufferPointer { t in
            for b in bytes { crc = t[Int((crc ^ UInt32(b)) & 0xFF)] ^ (crc >> 8) }
        }
        return crc ^ 0xFFFF_FFFF
    }

    public static func checksum(_ bytes: ArraySlice<UInt8>) -> UInt32 {
        bytes.withUnsafeBufferPointer { buffer in
            var crc: UInt32 = 0xFFFF_FFFF
            table.withUnsafeBufferPointer { t in
                for b in buffer { crc = t[Int((crc ^ UInt32(b)) & 0xFF)] ^ (crc >> 8) }
            }
            return crc ^ 0xFFFF_FFFF
        }
    }
}
