import Foundation

/// `zone.json`: what a zone is and how far its record files are known to be on disk.
struct ZoneMeta: Sendable, Equatable {
    var zoneName: String
    var ownerName: String
    /// Changes when a zone of this name is deleted and made again, so old change tokens expire.
    var epoch: String
    var created: Int64
    var capabilities: [String] = ["atomic", "fetchChanges"]
    /// Every entry up to this sequence number is in the record files and synced (DESIGN §3).
    var checkpointSeq: Int64 = 0
    /// Usage at the checkpoint.
    var usage: Int64 = 0
    /// The last client change token seen at the checkpoint (M7).
    var clientChangeToken: Data?

    func json() -> JSONValue {
        var o: [String: JSONValue] = [
            "zoneName": .string(zoneName), "ownerName": .string(ownerName), "epoch": .string(epoch),
            "created": .int(created), "capabilities": .array(capabilities.map { .string($0) }),
            "checkpointSeq": .int(checkpointSeq), "usage": .int(usage), "format": .int(1),
        ]
        if let t = clientChangeToken { o["clientChangeToken"] = .string(t.base64EncodedString()) }
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
    }

    static func read(_ path: String) throws(CKError) -> ZoneMeta? {
        guard let bytes = try Syscall.readFile(path).orThrow(.internalError, "cannot read \(path)") else { return nil }
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
        MarkerBytes.padded(.object([
            "boot": .string(bootID), "seq": .int(seq), "usage": .int(usage), "state": .string(busy ? "busy" : "clean"),
        ]))
    }

    init(bootID: String, seq: Int64, usage: Int64, busy: Bool) {
        self.bootID = bootID
        self.seq = seq
        self.usage = usage
        self.busy = busy
    }

    init?<C: Collection>(bytes: C) where C.Element == UInt8 {
        guard let json = try? JSONParser.parse(Array(bytes.prefix(Self.size))), let boot = json["boot"]?.stringValue,
              let seq = json["seq"]?.int64Value, let usage = json["usage"]?.int64Value,
              let state = json["state"]?.stringValue else { return nil }
        self.init(bootID: boot, seq: seq, usage: usage, busy: state != "clean")
    }

    static let currentBootID: String = {
        if case .success(let b?) = Syscall.readFile("/proc/sys/kernel/random/boot_id") {
            return String(decoding: b, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
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
        MarkerBytes.padded(.object(["boot": .string(bootID), "applied": .int(applied), "end": .int(end)]))
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
        guard let json = try? JSONParser.parse(Array(bytes)), let boot = json["boot"]?.stringValue,
              let applied = json["applied"]?.int64Value, let end = json["end"]?.int64Value else { return nil }
        self.init(bootID: boot, applied: applied, end: end)
    }
}

enum MarkerBytes {
    /// 128 bytes: the JSON, spaces, a newline (so `cat lock` shows two lines).
    static func padded(_ value: JSONValue) -> [UInt8] {
        var text = JSONWriter.compactString(value)
        text += String(repeating: " ", count: max(0, 127 - text.utf8.count)) + "\n"
        return Array(text.utf8)
    }
}
