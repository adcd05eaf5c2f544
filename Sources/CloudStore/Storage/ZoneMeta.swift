import Foundation

/// `zone.json`: what a zone is and how far its record files are known to be on disk.
package struct ZoneMeta: Sendable, Equatable {
    var zoneName: String
    var ownerName: String
    /// Changes when a zone of this name is deleted and made again, so old change tokens expire.
    var epoch: String
    var created: Int64
    var capabilities: [String] = ["atomic", "fetchChanges"]
    /// Every entry up to this sequence number is in the record files and synced.
    var checkpointSeq: Int64 = 0
    /// Usage at the checkpoint.
    var usage: Int64 = 0
    /// The last client change token seen at the checkpoint.
    var clientChangeToken: Data?
    /// `perZone` for a zone made with per-zone encryption (CloudKit's `encryptionScope`,
    /// fixed when the zone is made); nil, the default, for per-record.
    var encryptionScope: String?

    func json() -> JSONValue {
        var o: [String: JSONValue] = [
            "zoneName": .string(zoneName), "ownerName": .string(ownerName), "epoch": .string(epoch),
            "created": .int(created), "capabilities": .array(capabilities.map { .string($0) }),
            "checkpointSeq": .int(checkpointSeq), "usage": .int(usage), "format": .int(1),
        ]
        if let t = clientChangeToken { o["clientChangeToken"] = .string(t.base64EncodedString()) }
        if let e = encryptionScope { o["encryptionScope"] = .string(e) }
        return .object(o)
    }

    init(zoneName: String, ownerName: String, epoch: String, created: Int64) {
        self.zoneName = zoneName
        self.ownerName = ownerName
        self.epoch = epoch
        self.created = created
    }

    init(json: JSONValue, path: String) throws(CKError) {
        guard let name = json["zoneName"]?.stringValue, let epoch = json["epoch"]?.stringValue else {
            throw CKError(.internalError, "\(path) lacks zoneName or epoch; run `ckfs fsck`")
        }
        self.zoneName = name
        self.ownerName = json["ownerName"]?.stringValue ?? ""
        self.epoch = epoch
        self.created = json["created"]?.int64Value ?? 0
        self.capabilities = json["capabilities"]?.arrayValue?.compactMap(\.stringValue) ?? ["atomic", "fetchChanges"]
        self.checkpointSeq = json["checkpointSeq"]?.int64Value ?? 0
        self.usage = json["usage"]?.int64Value ?? 0
        self.clientChangeToken = json["clientChangeToken"]?.stringValue.flatMap { Data(base64Encoded: $0) }
        self.encryptionScope = json["encryptionScope"]?.stringValue
    }

    static func read(_ path: String) throws(CKError) -> ZoneMeta? {
        guard let bytes = try Syscall.readFile(path).orThrow(.internalError, "cannot read \(path)") else { return nil }
        return try parse(bytes, path: path)
    }

    /// The zone's settings from `zone.json`'s bytes, read from `path`.
    static func parse(_ bytes: [UInt8], path: String) throws(CKError) -> ZoneMeta {
        do {
            return try ZoneMeta(json: try JSONParser.parse(bytes), path: path)
        } catch let e as JSONParser.SyntaxError {
            throw CKError(.internalError, "\(path) is not valid JSON; run `ckfs fsck`", cause: .syntax(e))
        } catch {
            throw error as! CKError
        }
    }
}

/// The two markers in a zone's `lock` file, each 128 bytes of JSON padded with spaces and
/// written in place without fsync. Page-cache writes survive a process crash but not a
/// machine crash, hence the boot ID: after a reboot neither is trusted and the log is
/// replayed from the checkpoint.
///
/// Bytes 0–127, the **commit marker**, are written by the writer holding the zone's `flock`:
/// the last committed sequence number, the usage after it, and `busy` from just before an
/// append until just after it. Bytes 128–255, the **apply marker**, are written by whoever
/// writes record files, holding the byte-range lock on those bytes: how far the record files
/// are (`applied`) and where in the log the next entry to apply starts (`end`). Record files
/// are written behind the commit, so `applied` may trail `seq` by a few entries; readers take
/// those entries from the log.
struct CommitMarker: Equatable {
    var bootID: String
    var seq: Int64
    var usage: Int64
    /// True between the start of an append and its end: a crash there leaves a torn tail.
    var busy: Bool

    static let size = 128

    func bytes() -> [UInt8] {
        MarkerBytes.padded([("boot", .text(bootID)), ("seq", .number(seq)), ("state", .text(busy ? "busy" : "clean")), ("usage", .number(usage))])
    }

    init(bootID: String, seq: Int64, usage: Int64, busy: Bool) {
        self.bootID = bootID
        self.seq = seq
        self.usage = usage
        self.busy = busy
    }

    init?<C: Collection>(bytes: C) where C.Element == UInt8 {
        let fields = MarkerBytes.fields(Array(bytes.prefix(Self.size)))
        guard let boot = fields["boot"]?.text, let seq = fields["seq"]?.number, let usage = fields["usage"]?.number,
              let state = fields["state"]?.text else { return nil }
        self.init(bootID: boot, seq: seq, usage: usage, busy: state != "clean")
    }

    static let currentBootID: String = {
        // A UUID and a newline: its bytes but the newline and spaces, taken without Foundation's
        // `trimmingCharacters`, whose first use (through NSString) every cold command paid.
        if case .success(let b?) = Syscall.readFile("/proc/sys/kernel/random/boot_id") {
            return String(decoding: b.filter { $0 > 0x20 }, as: UTF8.self)
        }
        return "unknown-boot"
    }()
}

/// How far the record files are: every entry up to `applied` is in them, and the entry after
/// it starts at byte `end` of the log (see ``CommitMarker``).
struct ApplyMarker: Equatable {
    var bootID: String
    var applied: Int64
    var end: Int64

    static let offset = 128
    static let size = 128

    func bytes() -> [UInt8] {
        MarkerBytes.padded([("applied", .number(applied)), ("boot", .text(bootID)), ("end", .number(end))])
    }

    init(bootID: String, applied: Int64, end: Int64) {
        self.bootID = bootID
        self.applied = applied
        self.end = end
    }

    /// What a lock file without an apply marker (an older store) means: every committed entry
    /// applied (its one marker was only clean once the files were written); where the next
    /// entry starts is not known (-1: read the log from its start).
    static func assumed(from commit: CommitMarker?) -> ApplyMarker {
        ApplyMarker(bootID: commit?.bootID ?? CommitMarker.currentBootID, applied: commit?.seq ?? 0, end: -1)
    }

    init?<C: Collection>(bytes: C) where C.Element == UInt8 {
        let fields = MarkerBytes.fields(Array(bytes.prefix(Self.size)))
        guard let boot = fields["boot"]?.text, let applied = fields["applied"]?.number, let end = fields["end"]?.number else { return nil }
        self.init(bootID: boot, applied: applied, end: end)
    }
}

/// The markers' bytes: a flat JSON object of strings and integers, keys in sorted order,
/// padded to 128 bytes. A save reads and writes markers several times, so both ways are
/// written out by hand (the general JSON writer and parser took a tenth of a save's CPU);
/// anything the fast reader does not expect goes to the general parser.
enum MarkerBytes {
    enum Value: Equatable {
        case text(String)
        case number(Int64)

        var text: String? { if case .text(let s) = self { return s }; return nil }
        var number: Int64? { if case .number(let n) = self { return n }; return nil }
    }

    /// 128 bytes: the JSON (`fields` in the order given, which must be sorted), spaces, a
    /// newline (so `cat lock` shows two lines).
    static func padded(_ fields: [(String, Value)]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(128)
        out.append(UInt8(ascii: "{"))
        for (i, (key, value)) in fields.enumerated() {
            if i > 0 { out.append(UInt8(ascii: ",")) }
            JSONWriter.writeString(key, into: &out)
            out.append(UInt8(ascii: ":"))
            switch value {
            case .text(let s): JSONWriter.writeString(s, into: &out)
            case .number(let n): out.append(contentsOf: String(n).utf8)
            }
        }
        out.append(UInt8(ascii: "}"))
        if out.count < 127 { out.append(contentsOf: repeatElement(0x20, count: 127 - out.count)) }
        out.append(0x0A)
        return out
    }

    /// The fields of a marker; empty when the bytes hold none.
    static func fields(_ bytes: [UInt8]) -> [String: Value] {
        if let fast = fastFields(bytes) { return fast }
        guard let object = (try? JSONParser.parse(bytes))?.objectValue else { return [:] }
        var fields: [String: Value] = [:]
        for (key, value) in object {
            if let s = value.stringValue { fields[key] = .text(s) } else if let n = value.int64Value { fields[key] = .number(n) }
        }
        return fields
    }

    /// Reads `{"key":"text","key":123}` followed by white space; nil for anything else
    /// (escapes, other types, other spacing), which the general parser then reads.
    private static func fastFields(_ b: [UInt8]) -> [String: Value]? {
        var i = 0
        func quoted() -> String? {
            guard i < b.count, b[i] == 0x22 else { return nil }
            let start = i + 1
            var j = start
            while j < b.count, b[j] != 0x22 {
                if b[j] == 0x5C || b[j] < 0x20 { return nil }
                j += 1
            }
            guard j < b.count else { return nil }
            i = j + 1
            return String(decoding: b[start..<j], as: UTF8.self)
        }
        guard b.first == UInt8(ascii: "{") else { return nil }
        i = 1
        var fields: [String: Value] = [:]
        while true {
            guard let key = quoted(), i < b.count, b[i] == UInt8(ascii: ":") else { return nil }
            i += 1
            guard i < b.count else { return nil }
            if b[i] == 0x22 {
                guard let s = quoted() else { return nil }
                fields[key] = .text(s)
            } else {
                guard let (n, end) = b[...].decimalInteger(at: i), end < b.count, b[end] < 0x30 || b[end] > 0x39 else { return nil }
                i = end
                fields[key] = .number(n)
            }
            guard i < b.count else { return nil }
            if b[i] == UInt8(ascii: ",") { i += 1; continue }
            guard b[i] == UInt8(ascii: "}") else { return nil }
            i += 1
            break
        }
        while i < b.count {
            guard b[i] == 0x20 || b[i] == 0x0A else { return nil }
            i += 1
        }
        return fields
    }
}
