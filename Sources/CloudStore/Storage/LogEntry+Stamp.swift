extension LogEntry {
    /// What tells one entry from another of the same number (a log restored from elsewhere):
    /// when it was committed, and by which device.
    struct Stamp: Equatable {
        var seq: Int64
        var time: Int64
        var deviceID: String
        /// The frame's checksum (``LogEntry/checksum``).
        var checksum: UInt32?
    }

    /// What a framed line's last bytes tell of its entry: its number, time and checksum. The
    /// checksum covers the whole body, time and device included, so an index that noted it
    /// tells its entry from another history's without reading the entry's start.
    struct TailStamp: Equatable {
        var seq: Int64
        var time: Int64
        var checksum: UInt32
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
              let saved = body.firstIndex(ofBytes: savedKey),
              let device = body[..<saved].firstIndex(ofBytes: deviceKey),
              let deviceID = jsonString(at: device + deviceKey.count, in: body[..<saved]),
              let seqAt = body[saved...].lastIndex(ofBytes: seqKey),
              let (seq, afterSeq) = body.decimalInteger(at: seqAt + seqKey.count),
              body[afterSeq...].starts(with: timeKey),
              let (time, _) = body.decimalInteger(at: afterSeq + timeKey.count) else { return nil }
        return Stamp(seq: seq, time: time, deviceID: deviceID, checksum: framedChecksum(line))
    }

    /// The tail stamp of a framed line (without its newline) from its last bytes: `tail` is
    /// the line or any end of it, the checksum not checked against the body. The entry's `seq`
    /// is the last `"seq":` of the line (see ``stamp(_:)``: a record's field of that name is
    /// in `saved`, before it, and nothing after it can hold those bytes), so a tail that starts
    /// after it finds none and gives nil, as does one that does not end as a frame does.
    static func tailStamp(_ tail: ArraySlice<UInt8>) -> TailStamp? {
        guard let checksum = framedChecksum(tail) else { return nil }
        let body = tail[..<(tail.endIndex - suffixLength)]
        guard let seqAt = body.lastIndex(ofBytes: seqKey),
              let (seq, afterSeq) = body.decimalInteger(at: seqAt + seqKey.count),
              body[afterSeq...].starts(with: timeKey),
              let (time, _) = body.decimalInteger(at: afterSeq + timeKey.count) else { return nil }
        return TailStamp(seq: seq, time: time, checksum: checksum)
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
}
