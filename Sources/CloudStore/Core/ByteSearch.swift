import CCloudStoreShims
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// A byte found with the C library's `memchr` and `memrchr`, which compare a word or a vector
// of bytes at a time. The log's lines run to megabytes (an entry of a large batch), and a
// reader looking for where its lines start would otherwise compare them a byte at a time.
extension Array where Element == UInt8 {
    /// The index of the first `byte`, as `firstIndex(of:)` gives it.
    func firstIndex(ofByte byte: UInt8) -> Int? { self[...].firstIndex(ofByte: byte) }

    /// The index of the last `byte`, as `lastIndex(of:)` gives it.
    func lastIndex(ofByte byte: UInt8) -> Int? { self[...].lastIndex(ofByte: byte) }
}

extension ArraySlice where Element == UInt8 {
    /// The index of the first `byte`, as `firstIndex(of:)` gives it (an index of the slice's
    /// base).
    func firstIndex(ofByte byte: UInt8) -> Int? {
        withUnsafeBytes { buf -> Int? in
            guard let base = buf.baseAddress, let found = memchr(base, Int32(byte), buf.count) else { return nil }
            return startIndex + (UnsafeRawPointer(found) - base)
        }
    }

    /// The index of the last `byte`, as `lastIndex(of:)` gives it (an index of the slice's
    /// base).
    func lastIndex(ofByte byte: UInt8) -> Int? {
        withUnsafeBytes { buf -> Int? in
            guard let base = buf.baseAddress, let found = CCloudStoreShims_memrchr(base, Int32(byte), UInt(buf.count)) else { return nil }
            return startIndex + (UnsafeRawPointer(found) - base)
        }
    }

    /// Where the first run of `needle`'s bytes starts (an index of the slice's base).
    func firstIndex(ofBytes needle: [UInt8]) -> Int? {
        var from = startIndex
        while from + needle.count <= endIndex, let i = self[from...].firstIndex(ofByte: needle[0]) {
            if i + needle.count <= endIndex, self[i..<(i + needle.count)].elementsEqual(needle) { return i }
            from = i + 1
        }
        return nil
    }

    /// Where the last run of `needle`'s bytes starts (an index of the slice's base).
    func lastIndex(ofBytes needle: [UInt8]) -> Int? {
        var end = endIndex
        while end > startIndex, let i = self[startIndex..<end].lastIndex(ofByte: needle[0]) {
            if i + needle.count <= endIndex, self[i..<(i + needle.count)].elementsEqual(needle) { return i }
            end = i
        }
        return nil
    }
}
