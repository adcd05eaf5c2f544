import Foundation
import Testing
import TestSupport
@testable import CloudStore

/// `Syscall.forEachName` reads each name where readdir left it. A `struct dirent` copied whole
/// (Swift's `entry.pointee.d_name` does that) reads 256 bytes past a short last entry, off the
/// end of readdir's buffer; `ckfs serve` crashed in that copy while listing a zone's records.
@Suite struct DirectoryListingTests {
    /// Names of every length a file system allows, many more than one readdir buffer holds,
    /// come back whole and once each, as Foundation lists them.
    @Test func everyNameComesBackWholeAndOnce() throws {
        let dir = NSTemporaryDirectory() + "ckfs-listing-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        var made: Set<String> = []
        for index in 0..<3000 {
            let length = 1 + (index * 37) % 255
            let stem = "\(index)-"
            let name = stem + String(repeating: "é", count: max(0, (length - stem.utf8.count) / 2))
            #expect(FileManager.default.createFile(atPath: dir + "/" + name, contents: nil), "\(name)")
            made.insert(name)
        }
        let listed = try Syscall.listDirectory(dir).get() ?? []
        #expect(listed.count == made.count)
        #expect(Set(listed) == made)
        #expect(Set(try FileManager.default.contentsOfDirectory(atPath: dir)) == made)
    }

    @Test func aMissingDirectoryIsNotAnError() throws {
        #expect(try Syscall.listDirectory("/nonexistent-\(UUID().uuidString)").get() == nil)
    }

    @Test func anUnreadableDirectoryIsAnError() throws {
        #expect(throws: (any Error).self) { try Syscall.listDirectory("/etc/hostname").get() }
    }

    /// No Swift source of the engine takes a name out of a `dirent` by value.
    @Test func noSourceCopiesADirectoryEntry() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Sources")
        let files = FileManager.default.enumerator(atPath: root.path)?.compactMap { $0 as? String } ?? []
        #expect(files.contains { $0.hasSuffix("Syscall.swift") })
        for file in files where file.hasSuffix(".swift") {
            let text = try String(contentsOfFile: root.path + "/" + file, encoding: .utf8)
            #expect(!text.contains("pointee.d_name"), "\(file) copies a dirent's name")
        }
    }
}
