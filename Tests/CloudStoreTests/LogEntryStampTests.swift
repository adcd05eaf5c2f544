import Foundation
import Testing
import TestSupport
@testable import CloudStore

/// An entry's stamp (number, time, device, checksum), read without parsing its records, is what
/// parsing the whole entry gives, whatever its records, deletions and device hold; a damaged
/// line gives none. The line's last bytes give its number, time and checksum.
@Suite struct LogEntryStampTests {
    /// Strings that hold the bytes the stamp looks for, escaped as JSON escapes them.
    static let tricky = [#""device":"x"#, #""seq":1,"time":2"#, #"back\slash"#, "quote\"d", #"\""#, "é 雪 🚲", #","time":"#, ""]

    @Test func theStampIsWhatTheWholeEntrySays() throws {
        var generator = SystemRandomNumberGenerator()
        func pick(_ options: [String]) -> String { options.randomElement(using: &generator)! }
        for round in 0..<300 {
            let records = (0..<Int.random(in: 0...4, using: &generator)).map { i in
                record("r\(round)-\(i)-\(pick(Self.tricky))", [
                    "device": .string(pick(Self.tricky)), "seq": .int64(Int64.random(in: -5...5, using: &generator)),
                    "time": .string(pick(Self.tricky)), "notes": .list(.string, [.string(pick(Self.tricky)), .string(pick(Self.tricky))]),
                ])
            }
            let deletions = (0..<Int.random(in: 0...3, using: &generator)).map { i in
                LogEntry.Deletion(recordName: "d\(i)\(pick(Self.tricky))", cascade: Bool.random(using: &generator),
                                  recordType: Bool.random(using: &generator) ? pick(Self.tricky) : nil, root: nil)
            }
            let entry = LogEntry(seq: Int64.random(in: 1...1_000_000, using: &generator), time: Int64.random(in: 0...2_000_000_000_000, using: &generator),
                                 userRecordName: "_u", deviceID: "dev-\(pick(Self.tricky))",
                                 clientChangeToken: Bool.random(using: &generator) ? Data(pick(Self.tricky).utf8) : nil,
                                 saved: records, deleted: deletions, usage: Int64.random(in: 0...1 << 40, using: &generator))
            let framed = entry.frame()
            let line = framed[..<(framed.endIndex - 1)]
            let whole = try LogEntry.unframe(line, zoneID: ZoneID(zoneName: ZoneID.defaultZoneName, ownerName: "_u"))
            let stamp = try #require(LogEntry.stamp(line), "no stamp read from \(String(decoding: line, as: UTF8.self))")
            let checksum = try #require(whole.checksum)
            #expect(stamp == LogEntry.Stamp(seq: whole.seq, time: whole.time, deviceID: whole.deviceID, checksum: checksum))
            #expect(stamp == LogEntry.Stamp(seq: entry.seq, time: entry.time, deviceID: entry.deviceID, checksum: checksum))

            // The line's last bytes, from anywhere up to the entry's own "seq": give its number,
            // time and checksum; from after it, nothing.
            let seqAt = try #require(line.lastIndex(ofBytes: Array(#""seq":"#.utf8)))
            let tail = LogEntry.TailStamp(seq: entry.seq, time: entry.time, checksum: checksum)
            for from in [line.startIndex, Int.random(in: line.startIndex...seqAt, using: &generator), seqAt] {
                #expect(LogEntry.tailStamp(line[from...]) == tail, "the tail from byte \(from) of \(String(decoding: line, as: UTF8.self))")
            }
            for from in [seqAt + 1, Int.random(in: (seqAt + 1)..<line.endIndex, using: &generator)] {
                #expect(LogEntry.tailStamp(line[from...]) == nil, "the tail from byte \(from), after the entry's number")
            }

            // One byte changed anywhere: the checksum no longer holds.
            var damaged = Array(line)
            let at = Int.random(in: 0..<damaged.count, using: &generator)
            damaged[at] = damaged[at] == UInt8(ascii: "7") ? UInt8(ascii: "8") : UInt8(ascii: "7")
            #expect(LogEntry.stamp(damaged[...]) == nil, "a damaged line at byte \(at) gave a stamp")
        }
    }
}
