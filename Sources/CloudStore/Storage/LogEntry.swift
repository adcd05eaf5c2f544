import Foundation

/// One committed batch of one zone: the unit of atomicity, durability and change history.
///
/// On disk it is one line of `log.jsonl`, valid JSON on its own:
/// `{"body":{…},"crc":"1a2b3c4d"}` where the CRC-32C covers the body's bytes exactly as written.
public struct LogEntry: Sendable {
    public struct Deletion: Sendable, Equatable {
        public var recordName: String
        /// Deleted because a `deleteSelf` reference pointed at a deleted record; not
        /// reported per item.
        public var cascade: Bool
        /// The deleted record's type, for the change fetches that report it; nil in entries
        /// written before it was kept.
        public var recordType: String?

        public init(recordName: String, cascade: Bool, recordType: String? = nil) {
            self.recordName = recordName
            self.cascade = cascade
            self.recordType = recordType
        }
    }

    public var seq: Int64
    public var time: Int64
    public var userRecordName: String
    public var deviceID: String
    /// The client's opaque token, kept with the zone.
    public var clientChangeToken: Data?
    public var saved: [Record]
    public var deleted: [Deletion]
    /// Bytes of records and assets in the zone after this entry.
    public var usage: Int64

    /// The entry's body as a JSON value: the reference form. ``frame()`` writes the same
    /// bytes straight from the entry (``RecordWriter``), which tests check.
    func body() -> JSONValue {
        var o: [String: JSONValue] = [
            "seq": .int(seq), "time": .int(time), "user": .string(userRecordName), "device": .string(deviceID),
            "saved": .array(saved.map(RecordCoding.encode)),
            "deleted": .array(deleted.map { d in
                var o: [String: JSONValue] = ["recordName": .string(d.recordName)]
                if d.cascade { o["cascade"] = .bool(true) }
                if let type = d.recordType { o["recordType"] = .string(type) }
                return .object(o)
            }),
            "usage": .int(usage),
        ]
        if let t = clientChangeToken { o["clientChangeToken"] = .string(t.base64EncodedString()) }
        return .object(o)
    }

    private static let prefix = Array(#"{"body":"#.utf8)
    private static let crcPrefix = Array(#","crc":""#.utf8)
    private static let suffixLength = crcPrefix.count + 8 + 2 // ,"crc":"xxxxxxxx"}

    /// The framed line, newline included.
    func frame() -> [UInt8] {
        let body = RecordWriter.entryBody(self)
        var line = Self.prefix
        line.reserveCapacity(body.count + 40)
        line += body
        line += Self.crcPrefix
        let crc = String(CRC32C.checksum(body), radix: 16)
        line += Array((String(repeating: "0", count: 8 - crc.count) + crc).utf8)
        line += Array("\"}\n".utf8)
        return line
    }

    enum FrameError: Error { case badFrame(String) }

    /// Reads one framed line (without its newline). Throws for a damaged line.
    static func unframe(_ line: ArraySlice<UInt8>, zoneID: ZoneID) throws -> LogEntry {
        guard line.count > prefix.count + suffixLength, line.starts(with: prefix) else { throw FrameError.badFrame("not a log frame") }
        let bodyEnd = line.endIndex - suffixLength
        let body = line[(line.startIndex + prefix.count)..<bodyEnd]
        guard line[bodyEnd...].starts(with: crcPrefix) else { throw FrameError.badFrame("no checksum") }
        let hex = String(decoding: line[(bodyEnd + crcPrefix.count)..<(bodyEnd + crcPrefix.count + 8)], as: UTF8.self)
        guard let crc = UInt32(hex, radix: 16), crc == CRC32C.checksum(body) else { throw FrameError.badFrame("checksum mismatch") }
        let json = try JSONParser.parse(body)
        guard let seq = json["seq"]?.int64Value, let saved = json["saved"]?.arrayValue, let deleted = json["deleted"]?.arrayValue else {
            throw FrameError.badFrame("entry lacks seq, saved or deleted")
        }
        return LogEntry(
            seq: seq, time: json["time"]?.int64Value ?? 0,
            userRecordName: json["user"]?.stringValue ?? "", deviceID: json["device"]?.stringValue ?? "",
            clientChangeToken: json["clientChangeToken"]?.stringValue.flatMap { Data(base64Encoded: $0) },
            saved: try saved.map { try RecordCoding.decode($0, mode: .stored, zoneID: zoneID).record },
            deleted: deleted.compactMap { d in
                d["recordName"]?.stringValue.map {
                    Deletion(recordName: $0, cascade: d["cascade"]?.boolValue ?? false, recordType: d["recordType"]?.stringValue)
                }
            },
            usage: json["usage"]?.int64Value ?? 0)
    }
}

/// Splits log bytes into entries.
struct LogScanner {
    enum Outcome {
        /// Every byte formed whole, valid entries.
        case clean
        /// The bytes from this offset on are an unfinished or damaged last entry: a crash
        /// during an append. Safe to cut off under the zone lock.
        case tornTail(at: Int64)
        /// A damaged entry with whole entries after it: not a crash during append.
        case damaged(at: Int64, reason: String)
    }

    /// Scans `bytes` (the log from `baseOffset` on) and returns the entries with their end offsets.
    static func scan(_ bytes: [UInt8], baseOffset: Int64, zoneID: ZoneID) -> (entries: [(LogEntry, end: Int64)], outcome: Outcome) {
        var entries: [(LogEntry, end: Int64)] = []
        var start = 0
        while start < bytes.count {
            guard let nl = bytes[start...].firstIndex(of: 0x0A) else {
                return (entries, .tornTail(at: baseOffset + Int64(start)))
            }
            do {
                let entry = try LogEntry.unframe(bytes[start..<nl], zoneID: zoneID)
                entries.append((entry, baseOffset + Int64(nl + 1)))
            } catch {
                // A bad line is a torn tail only when nothing valid follows it.
                let rest = bytes[(nl + 1)...]
                let laterValid = rest.split(separator: 0x0A).contains { (try? LogEntry.unframe($0, zoneID: zoneID)) != nil }
                if laterValid {
                    return (entries, .damaged(at: baseOffset + Int64(start), reason: "\(error)"))
                }
                return (entries, .tornTail(at: baseOffset + Int64(start)))
            }
            start = nl + 1
        }
        return (entries, .clean)
    }

    /// The offset after each whole line, without parsing any.
    static func lineEnds(_ bytes: [UInt8]) -> [Int64] {
        var ends: [Int64] = []
        var start = 0
        while start < bytes.count, let nl = bytes[start...].firstIndex(of: 0x0A) {
            ends.append(Int64(nl + 1))
            start = nl + 1
        }
        return ends
    }

    /// A body's keys are written sorted and `clientChangeToken` sorts first among them, so an
    /// entry with a token starts with these bytes and no other entry does.
    static let tokenLinePrefix = Array(#"{"body":{"clientChangeToken":""#.utf8)

    /// The client change token of the last entry that gave one, parsing only the lines
    /// that start like an entry with a token, from the end.
    static func lastClientChangeToken(_ bytes: [UInt8], lineEnds: [Int64], zoneID: ZoneID) -> Data? {
        for (i, end) in lineEnds.enumerated().reversed() {
            let start = i > 0 ? Int(lineEnds[i - 1]) : 0
            let line = bytes[start..<(Int(end) - 1)]
            guard line.starts(with: tokenLinePrefix),
                  let token = (try? LogEntry.unframe(line, zoneID: zoneID))?.clientChangeToken else { continue }
            return token
        }
        return nil
    }

    /// The whole entries appended to the log at `path` between `offset` and `size`; a
    /// partial last one (an append in progress) is left for the next look.
    static func readAppended(_ path: String, from offset: Int64, to size: Int64, zoneID: ZoneID) throws(CKError) -> [(LogEntry, end: Int64)] {
        let fd = try Syscall.open(path, O_RDONLY).orThrow(.internalError, "cannot open \(path)")
        defer { Syscall.close(fd) }
        let bytes = try Syscall.pread(fd, count: Int(size - offset), offset: offset, path: path).orThrow(.internalError, "cannot read \(path)")
        return scan(bytes, baseOffset: offset, zoneID: zoneID).entries
    }
}

/// Finds one entry of a log by its sequence number, reading a few small pieces of the file
/// instead of the whole log.
///
/// Sequence numbers grow along the log (commits append in order; compaction keeps a suffix;
/// recovery appends the journal's entries after the last one), so the entry is found by
/// bisecting the file's bytes: a probe reads from a byte to the end of the line it falls in
/// and takes the line's number from its tail, where the writer puts it (a body's keys are
/// sorted: `…,"saved":[…],"seq":N,"time":…,"usage":…,"user":"…"}`, and nothing after `seq`
/// can hold those bytes, since a JSON string escapes its quotes). Only the entry found is
/// parsed, and its checksum and number checked. A line without a newline yet (an append in
/// progress) is not an entry.
struct LogSeeker {
    let fd: Int32
    let path: String
    /// The bytes of the file taken as the log: appends after it are not looked at.
    let size: Int64
    /// Told the size of every read.
    let noteRead: (Int) -> Void
    /// The last piece read, to serve the tail of a line a probe has just read up to.
    private var piece: (start: Int64, bytes: [UInt8]) = (0, [])

    init(fd: Int32, path: String, size: Int64, noteRead: @escaping (Int) -> Void) {
        self.fd = fd
        self.path = path
        self.size = size
        self.noteRead = noteRead
    }

    private static let seqKey = Array(#""seq":"#.utf8)

    /// The entry numbered `seq`, or nil when no whole entry of the log has that number.
    mutating func entry(seq: Int64, zoneID: ZoneID) throws(CKError) -> LogEntry? {
        // `lo` is where an entry starts, and the entries before it have smaller numbers; the
        // entries whose newline is at `hi` or after have larger ones.
        var lo: Int64 = 0
        var hi = size
        while lo < hi {
            let mid = lo + (hi - lo) / 2
            guard let newline = try firstNewline(from: mid, below: hi) else {
                hi = mid
                continue
            }
            guard let (found, start) = try seqOfLine(endingAt: newline, notBefore: lo) else { return nil }
            if found == seq {
                let from: Int64
                if let start { from = start } else { from = try lineStart(before: newline, notBefore: lo) }
                let line = try read(from..<newline)
                guard let entry = try? LogEntry.unframe(line[...], zoneID: zoneID), entry.seq == seq else { return nil }
                return entry
            }
            if found < seq { lo = newline + 1 } else { hi = mid }
        }
        return nil
    }

    /// Where the first entry numbered above `seq` starts (`size` when there is none), and the
    /// number of the log's first entry (nil for an empty log). Nil when a probe lands on a line
    /// that is not an entry (a damaged log), which only a whole read can tell apart.
    mutating func start(ofFirstEntryAfter seq: Int64) throws(CKError) -> (offset: Int64, firstSeq: Int64?)? {
        var firstSeq: Int64?
        if let newline = try firstNewline(from: 0, below: size) {
            guard let (found, _) = try seqOfLine(endingAt: newline, notBefore: 0) else { return nil }
            firstSeq = found
        }
        // As in `entry(seq:)`: `lo` is where an entry starts and the entries before it have
        // numbers up to `seq`; the entries whose newline is at `hi` or after have larger ones.
        var lo: Int64 = 0
        var hi = size
        while lo < hi {
            let mid = lo + (hi - lo) / 2
            guard let newline = try firstNewline(from: mid, below: hi) else {
                hi = mid
                continue
            }
            guard let (found, _) = try seqOfLine(endingAt: newline, notBefore: lo) else { return nil }
            if found <= seq { lo = newline + 1 } else { hi = mid }
        }
        return (lo, firstSeq)
    }

    /// The offset of the first newline in `from..<below`.
    private mutating func firstNewline(from: Int64, below: Int64) throws(CKError) -> Int64? {
        var at = from
        var chunk: Int64 = 512
        while at < below {
            let end = min(below, at + chunk)
            let bytes = try read(at..<end)
            if let i = bytes.firstIndex(of: 0x0A) { return at + Int64(i) }
            at = end
            chunk = min(chunk * 2, 1 << 20)
        }
        return nil
    }

    /// The number in the tail of the line that ends at `newline` and starts at `notBefore` or
    /// after, with the line's start when the bytes read show it; nil when the line has no
    /// number where an entry has it (it is no entry).
    private mutating func seqOfLine(endingAt newline: Int64, notBefore floor: Int64) throws(CKError) -> (Int64, start: Int64?)? {
        var window: Int64 = 256
        while true {
            let from = max(floor, newline - window)
            let bytes = try read(from..<newline)
            var start: Int64? = from == floor ? floor : nil
            var lineBytes = bytes[...]
            if let nl = bytes.lastIndex(of: 0x0A) {
                start = from + Int64(nl + 1)
                lineBytes = bytes[(nl + 1)...]
            }
            if let key = Self.lastIndex(of: Self.seqKey, in: lineBytes) {
                var i = key + Self.seqKey.count
                var negative = false
                if i < lineBytes.endIndex, lineBytes[i] == UInt8(ascii: "-") { negative = true; i += 1 }
                var value: Int64 = 0
                var digits = 0
                while i < lineBytes.endIndex, lineBytes[i] >= 0x30, lineBytes[i] <= 0x39, digits < 18 {
                    value = value * 10 + Int64(lineBytes[i] - 0x30)
                    digits += 1
                    i += 1
                }
                guard digits > 0 else { return nil }
                return (negative ? -value : value, start)
            }
            if start != nil { return nil }
            window *= 2
        }
    }

    /// The start of the line whose newline is at `newline`, at `notBefore` or after.
    private mutating func lineStart(before newline: Int64, notBefore floor: Int64) throws(CKError) -> Int64 {
        var end = newline
        var chunk: Int64 = 4096
        while end > floor {
            let from = max(floor, end - chunk)
            let bytes = try read(from..<end)
            if let nl = bytes.lastIndex(of: 0x0A) { return from + Int64(nl + 1) }
            end = from
            chunk = min(chunk * 2, 1 << 20)
        }
        return floor
    }

    private static func lastIndex(of needle: [UInt8], in hay: ArraySlice<UInt8>) -> Int? {
        guard hay.count >= needle.count else { return nil }
        var i = hay.endIndex - needle.count
        while i >= hay.startIndex {
            if hay[i] == needle[0], hay[i..<(i + needle.count)].elementsEqual(needle) { return i }
            i -= 1
        }
        return nil
    }

    /// The bytes of `range`, from the last piece read when it holds them.
    private mutating func read(_ range: Range<Int64>) throws(CKError) -> [UInt8] {
        let have = piece.start..<(piece.start + Int64(piece.bytes.count))
        if range.lowerBound >= have.lowerBound, range.upperBound <= have.upperBound {
            return Array(piece.bytes[Int(range.lowerBound - piece.start)..<Int(range.upperBound - piece.start)])
        }
        let bytes = try Syscall.pread(fd, count: Int(range.count), offset: range.lowerBound, path: path).orThrow(.internalError, "cannot read \(path)")
        noteRead(bytes.count)
        guard bytes.count == range.count else {
            throw CKError(.internalError, "\(path) ended at byte \(range.lowerBound + Int64(bytes.count)) while reading up to \(range.upperBound); run `ckfs fsck`")
        }
        piece = (range.lowerBound, bytes)
        return bytes
    }
}
