import Foundation
import Testing
@testable import CloudStore

/// An entry's stamp (number, time, device), read without parsing its records, is what parsing
/// the whole entry gives, whatever its records, deletions and device hold; a damaged line
/// gives none.
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
            #expect(stamp == LogEntry.Stamp(seq: whole.seq, time: whole.time, deviceID: whole.deviceID))
            #expect(stamp == LogEntry.Stamp(seq: entry.seq, time: entry.time, deviceID: entry.deviceID))

            // One byte changed anywhere: the checksum no longer holds.
            var damaged = Array(line)
            let at = Int.random(in: 0..<damaged.count, using: &generator)
            damaged[at] = damaged[at] == UInt8(ascii: "7") ? UInt8(ascii: "8") : UInt8(ascii: "7")
            #expect(LogEntry.stamp(damaged[...]) == nil, "a damaged line at byte \(at) gave a stamp")
        }
    }
}
