extension LogEntry {
    /// What tells one entry from another of the same number (a log restored from elsewhere):
    /// when it was committed, and by which device.
    struct Stamp: Equatable {
        var seq: Int64
        var time: Int64
        var deviceID: String
    }

    private static let deviceKey = Array(#""device":"#.utf8)
    private static let savedKey = Array(#""saved":"#.utf8)
    private static let seqKey = Array(#""seq":"#.utf8)
    private static let timeKey = Array(#","time":"#.utf8)

    /// The stamp of one framed line (without its newline), read without parsing its records: an
    /// index's check that it belongs to the log reads one entry, which may hold a batch of 400.
    /// The checksum is checked as ``unframe(_:zoneID:)`` checks it. A body's keys are sorted
    /// (``RecordWriter/entryBody(_:)``): `device` comes before `saved`, after a token and the
    /// deletions, whose strings cannot hold its bytes (a JSON string escapes its quotes), and
    /// `seq` and `time` come after `saved` (see ``LogSeeker``). Nil for a damaged line, or one
    /// whose keys are not where the writer puts them: the caller then unframes it.
    static func stamp(_ line: ArraySlice<UInt8>) -> Stamp? {
        guard let body = try? checkedBody(line),
              let saved = firstIndex(of: savedKey, in: body),
              let device = firstIndex(of: deviceKey, in: body[..<saved]),
              let deviceID = jsonString(at: device + deviceKey.count, in: body[..<saved]),
              let seqAt = lastIndex(of: seqKey, in: body[saved...]),
              let (seq, afterSeq) = integer(at: seqAt + seqKey.count, in: body),
              body[afterSeq...].starts(with: timeKey),
              let (time, _) = integer(at: afterSeq + timeKey.count, in: body) else { return nil }
        return Stamp(seq: seq, time: time, deviceID: deviceID)
    }

    /// The JSON string that starts at `start`, decoded; nil when none does.
    private static func jsonString(at start: Int, in bytes: ArraySlice<UInt8>) -> String? {
        guard start < bytes.endIndex, bytes[start] == UInt8(ascii: "\"") else { return nil }
        var i = start + 1
        while i < bytes.endIndex {
            switch bytes[i] {
            case UInt8(ascii: "\\"): i += 2
            case UInt8(ascii: "\""):
                guard case .string(let s)? = try? JSONParser.parse(bytes[start...i]) else { return nil }
                return s
            default: i += 1
            }
        }
        return nil
    }

    /// The decimal integer that starts at `start`, and where it ends; nil when none does.
    private static func integer(at start: Int, in bytes: ArraySlice<UInt8>) -> (Int64, end: Int)? {
        var i = start
        let negative = i < bytes.endIndex && bytes[i] == UInt8(ascii: "-")
        if negative { i += 1 }
        var value: Int64 = 0
        let first = i
        while i < bytes.endIndex, bytes[i] >= 0x30, bytes[i] <= 0x39, i - first < 18 {
            value = value * 10 + Int64(bytes[i] - 0x30)
            i += 1
        }
        guard i > first else { return nil }
        return (negative ? -value : value, i)
    }

    private static func firstIndex(of needle: [UInt8], in hay: ArraySlice<UInt8>) -> Int? {
        var from = hay.startIndex
        while from + needle.count <= hay.endIndex, let i = hay[from...].firstIndex(ofByte: needle[0]) {
            if i + needle.count <= hay.endIndex, hay[i..<(i + needle.count)].elementsEqual(needle) { return i }
            from = i + 1
        }
        return nil
    }

    private static func lastIndex(of needle: [UInt8], in hay: ArraySlice<UInt8>) -> Int? {
        var end = hay.endIndex
        while end > hay.startIndex, let i = hay[hay.startIndex..<end].lastIndex(ofByte: needle[0]) {
            if i + needle.count <= hay.endIndex, hay[i..<(i + needle.count)].elementsEqual(needle) { return i }
            end = i
        }
        return nil
    }
}
