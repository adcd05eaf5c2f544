import Testing
import TestSupport
@testable import CloudStore

/// The C library's byte search gives the indexes Swift's own search gives, for whole arrays and
/// for slices that start and end anywhere (indexes of the base, as a slice's are).
@Suite struct ByteSearchTests {
    @Test func theCLibrarysSearchAgreesWithSwiftsOnRandomSlices() {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<2_000 {
            let count = Int.random(in: 0...300, using: &generator)
            // Few newlines, so that many slices hold none and some hold one at an edge.
            let bytes = (0..<count).map { _ in UInt8.random(in: 0...40, using: &generator) == 0 ? 0x0A : UInt8(ascii: "x") }
            #expect(bytes.firstIndex(ofByte: 0x0A) == bytes.firstIndex(of: 0x0A))
            #expect(bytes.lastIndex(ofByte: 0x0A) == bytes.lastIndex(of: 0x0A))
            let lower = Int.random(in: 0...count, using: &generator)
            let upper = Int.random(in: lower...count, using: &generator)
            let slice = bytes[lower..<upper]
            #expect(slice.firstIndex(ofByte: 0x0A) == slice.firstIndex(of: 0x0A), "slice \(lower)..<\(upper)")
            #expect(slice.lastIndex(ofByte: 0x0A) == slice.lastIndex(of: 0x0A), "slice \(lower)..<\(upper)")
            // A run of bytes: where a plain walk over the slice finds it first and last.
            let needle: [UInt8] = [0x0A, UInt8(ascii: "x")]
            let starts = slice.indices.filter { $0 + needle.count <= slice.endIndex && slice[$0..<($0 + needle.count)].elementsEqual(needle) }
            #expect(slice.firstIndex(ofBytes: needle) == starts.first, "slice \(lower)..<\(upper)")
            #expect(slice.lastIndex(ofBytes: needle) == starts.last, "slice \(lower)..<\(upper)")
        }
    }
}
