import Foundation

/// One committed batch of one zone: the unit of atomicity, durability and change history.
///
/// On disk it is one line of `log.jsonl`, valid JSON on its own:
/// `{"body":{…},"crc":"1a2b3c4d"}` where the CRC-32C covers the body's bytes exactly as written.
package struct LogEntry: Sendable {
    public struct Deletion: Sendable, Equatable {
        public var recordName: String
        /// Deleted because a `deleteSelf` reference pointed at a deleted record; not
        /// reported per item.
        public var cascade: Bool
        /// The deleted record's type, for the change fetches that report it; nil in entries
        /// written before it was kept.
        public var recordType: String?
        /// The root of the shared hierarchy the deleted record was in (itself, or the nearest
        /// ancestor that is a share's root), so that a change fetch in a shared database tells
        /// of its deletion only to those it was shared with; nil when it was in none.
        public var root: String?

        public init(recordName: String, cascade: Bool, recordType: String? = nil, root: String? = nil) {
            self.recordName = recordName
            self.cascade = cascade
            self.recordType = recordType
            self.root = root
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
    /// The CRC-32C of the entry's body as the log holds it (its frame's `crc`): set when the
    /// entry is read from the log or committed, nil before it is framed. The last entry's is
    /// at the log's very end, so an index that notes it tells its entry from another history's
    /// by reading the log's last bytes (``ZoneFolder/isLogged(_:)``).
    var checksum: UInt32? = nil

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
                if let root = d.root { o["root"] = .string(root) }
                return .object(o)
            }),
            "usage": .int(usage),
        ]
        if let t = clientChangeToken { o["clientChangeToken"] = .string(t.base64EncodedString()) }
        return .object(o)
    }

    private static let prefix = Array(#"{"body":"#.utf8)
    private static let crcPrefix = Array(#","crc":""#.utf8)
    private static let frameEnd = Array(#""}"#.utf8)
    static let suffixLength = crcPrefix.count + 8 + frameEnd.count // ,"crc":"xxxxxxxx"}

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

    /// Where a framed line's checksum starts, counted back from the line's end (without its
    /// newline): `,"crc":"` then eight hex digits then `"}`.
    private static let checksumDigitsFromEnd = 8 + frameEnd.count

    /// The checksum a framed line (without its newline) ends with, read from its last bytes
    /// only and not checked against its body; nil when it does not end as a frame does.
    static func framedChecksum(_ line: ArraySlice<UInt8>) -> UInt32? {
        guard line.count >= suffixLength, line.suffix(frameEnd.count).elementsEqual(frameEnd),
              line[(line.endIndex - suffixLength)...].starts(with: crcPrefix) else { return nil }
        let digits = line[(line.endIndex - checksumDigitsFromEnd)..<(line.endIndex - frameEnd.count)]
        return UInt32(String(decoding: digits, as: UTF8.self), radix: 16)
    }

    enum FrameError: Error { case badFrame(String) }

    /// The body of one framed line (without its newline), its checksum checked. Throws for a
    /// damaged line.
    static func checkedBody(_ line: ArraySlice<UInt8>) throws -> ArraySlice<UInt8> {
        guard line.count > prefix.count + suffixLength, line.starts(with: prefix) else { throw FrameError.badFrame("not a log frame") }
        let bodyEnd = line.endIndex - suffixLength
        let body = line[(line.startIndex + prefix.count)..<bodyEnd]
        guard line[bodyEnd...].starts(with: crcPrefix), line.suffix(2).elementsEqual(Self.frameEnd) else { throw FrameError.badFrame("no checksum") }
        guard let crc = framedChecksum(line), crc == CRC32C.checksum(body) else { throw FrameError.badFrame("checksum mismatch") }
        return body
    }

    /// Reads one framed line (without its newline). Throws for a damaged line.
    static func unframe(_ line: ArraySlice<UInt8>, zoneID: ZoneID) throws -> LogEntry {
        let json = try JSONParser.parse(try checkedBody(line))
        guard let seq = json["seq"]?.int64Value, let saved = json["saved"]?.arrayValue, let deleted = json["deleted"]?.arrayValue else {
            throw FrameError.badFrame("entry lacks seq, saved or deleted")
        }
        var entry = LogEntry(
            seq: seq, time: json["time"]?.int64Value ?? 0,
            userRecordName: json["user"]?.stringValue ?? "", deviceID: json["device"]?.stringValue ?? "",
            clientChangeToken: json["clientChangeToken"]?.stringValue.flatMap { Data(base64Encoded: $0) },
            saved: try saved.map { try RecordCoding.decode($0, mode: .stored, zoneID: zoneID).record },
            deleted: deleted.compactMap { d in
                d["recordName"]?.stringValue.map {
                    Deletion(recordName: $0, cascade: d["cascade"]?.boolValue ?? false, recordType: d["recordType"]?.stringValue,
                             root: d["root"]?.stringValue)
                }
            },
            usage: json["usage"]?.int64Value ?? 0)
        entry.checksum = framedChecksum(line)
        return entry
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
            guard let nl = bytes[start...].firstIndex(ofByte: 0x0A) else {
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
        while start < bytes.count, let nl = bytes[start...].firstIndex(ofByte: 0x0A) {
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

    /// Every client change token the log's entries gave, with each entry's sequence number,
    /// parsing only the lines that start like an entry with a token.
    static func clientChangeTokens(_ bytes: [UInt8], lineEnds: [Int64], zoneID: ZoneID) -> [(seq: Int64, token: Data)] {
        var out: [(seq: Int64, token: Data)] = []
        var start = 0
        for end in lineEnds {
            let line = bytes[start..<(Int(end) - 1)]
            start = Int(end)
            guard line.starts(with: tokenLinePrefix), let entry = try? LogEntry.unframe(line, zoneID: zoneID),
                  let token = entry.clientChangeToken else { continue }
            out.append((entry.seq, token))
        }
        return out
    }

    /// The whole entries appended to the log at `path` between `offset` and `size`; a
    /// partial last one (an append in progress) is left for the next look.
    static func readAppended(_ path: String, from offset: Int64, to size: Int64, zoneID: ZoneID) throws(CKError) -> [(LogEntry, end: Int64)] {
        let fd = try Syscall.open(path, Posix.O_RDONLY).orThrow(.internalError, "cannot open \(path)")
        defer { Syscall.close(fd) }
        return try readAppended(fd, path: path, from: offset, to: size, zoneID: zoneID)
    }

    /// As ``readAppended(_:from:to:zoneID:)``, from the log open at `fd`.
    static func readAppended(_ fd: Int32, path: String, from offset: Int64, to size: Int64, zoneID: ZoneID) throws(CKError) -> [(LogEntry, end: Int64)] {
        let bytes = try Syscall.pread(fd, count: Int(size - offset), offset: offset, path: path).orThrow(.internalError, "cannot read \(path)")
        return scan(bytes, baseOffset: offset, zoneID: zoneID).entries
    }
}
