import Foundation
import Testing
import TestSupport
@testable import CloudStore

/// `ZoneFolder.loggedStamp(seq:)` (``LogSeeker``) gives each entry's number, time and device as
/// the whole log gives them: the last entry read back from the end, the others found by
/// bisection; in a log of one entry, of entries of many sizes, and after a torn append. The
/// last entry's costs one small read.
@Suite struct LogSeekerTests {
    @Test func everyStampIsTheWholeLogs() throws {
        let t = try TempStore(tuning: .with { $0.compactLogBytes = 64 << 20; $0.checkpointEvery = 1_000 })
        let db = try t.db()
        let storage = db.zoneFolder(ZoneID.defaultZoneName)
        func expectStamps(_ when: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
            let entries = try storage.history().entries
            try #require(!entries.isEmpty, sourceLocation: sourceLocation)
            for entry in entries {
                let stamp = try storage.loggedStamp(seq: entry.seq)
                #expect(stamp?.seq == entry.seq && stamp?.time == entry.time && stamp?.deviceID == entry.deviceID && entry.checksum != nil && stamp?.checksum == entry.checksum,
                        "\(when): entry \(entry.seq) gave \(String(describing: stamp))", sourceLocation: sourceLocation)
            }
            #expect(try storage.loggedStamp(seq: entries.last!.seq + 1) == nil, "\(when): past the last entry", sourceLocation: sourceLocation)
        }

        try db.save(record("first"))
        try expectStamps("one entry")
        for i in 0..<30 {
            let text = FieldValue.string(String(repeating: "x", count: 300 * i))
            _ = try db.modify(saving: (0..<(i % 4 + 1)).map { record("r\(i)-\($0)", ["text": text]) })
        }
        try expectStamps("31 entries of 0.1 to 36 KB")

        // The last entry's stamp is one piece read from the end; a bisection through the large
        // entries before it would read several KB of each line a probe falls in.
        try db.save(record("last"))
        try expectStamps("a small last entry")
        let last = try #require(try storage.history().entries.last).seq
        let reads = ChangePageTests.Counter()
        storage.observers.logRead = { reads.add($0) }
        #expect(try storage.loggedStamp(seq: last)?.seq == last)
        #expect(reads.value > 0 && reads.value <= 4_096, "read \(reads.value) bytes for the last entry's stamp")
        storage.observers.logRead = nil

        // A writer killed during an append: part of a line, no newline.
        t.store.waitForRecordFiles()
        let fd = open(storage.logPath, O_WRONLY | O_APPEND)
        try #require(fd >= 0)
        let torn = Array(#"{"body":{"deleted":[],"device":"gone","saved":[{"fields":"#.utf8)
        #expect(write(fd, torn, torn.count) == torn.count)
        close(fd)
        try expectStamps("a torn append")
    }
}
