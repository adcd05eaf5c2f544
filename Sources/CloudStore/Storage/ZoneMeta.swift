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

/// The marker in a zone's `lock` file: which entries the record files hold, written (without
/// fsync) by the writer that holds the lock. Page-cache writes survive a process crash but not
/// a machine crash, hence the boot ID: after a reboot the marker is not trusted and the log is
/// replayed from the checkpoint.
struct AppliedMarker: Equatable {
    var bootID: String
    var seq: Int64
    var usage: Int64
    /// True between the start of a commit and the end of applying it.
    var busy: Bool

    static let size = 128

    func bytes() -> [UInt8] {
        var text = JSONWriter.compactString(.object([
            "boot": .string(bootID), "seq": .int(seq), "usage": .int(usage), "state": .string(busy ? "busy" : "clean"),
        ]))
        text += String(repeating: " ", count: max(0, Self.size - 1 - text.utf8.count)) + "\n"
        return Array(text.utf8)
    }

    init(bootID: String, seq: Int64, usage: Int64, busy: Bool) {
        self.bootID = bootID
        self.seq = seq
        self.usage = usage
        self.busy = busy
    }

    init?(bytes: [UInt8]) {
        guard let json = try? JSONParser.parse(bytes), let boot = json["boot"]?.stringValue,
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
