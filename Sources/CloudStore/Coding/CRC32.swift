import CCloudStoreShims

/// CRC-32C (Castagnoli), table-driven, for framing zone log entries (and naming lost+found files).
package enum CRC32C {
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

    public static func checksum(_ bytes: [UInt8]) -> UInt32 { checksum(bytes[...]) }

    /// With the CPU's CRC-32C instruction where there is one (x86-64 with SSE 4.2): a log
    /// entry's checksum was a few percent of a save's CPU a byte at a time.
    public static func checksum(_ bytes: ArraySlice<UInt8>) -> UInt32 {
        bytes.withUnsafeBufferPointer { buffer in
            var done: Int32 = 0
            let fast = CCloudStoreShims_crc32c(0xFFFF_FFFF, buffer.baseAddress, UInt(buffer.count), &done)
            if done != 0 { return fast ^ 0xFFFF_FFFF }
            var crc: UInt32 = 0xFFFF_FFFF
            table.withUnsafeBufferPointer { t in
                for b in buffer { crc = t[Int((crc ^ UInt32(b)) & 0xFF)] ^ (crc >> 8) }
            }
            return crc ^ 0xFFFF_FFFF
        }
    }
}
