import CloudStore
import Crypto
import Foundation

/// Assets on their way into records, and the URLs they are read back by.
///
/// `assets/upload` opens an upload slot; the client POSTs the bytes to the slot's URL, which
/// stages them in a folder of this server's own and answers with a receipt; a save that names
/// the receipt gives the staged file to the engine, which copies it into the zone's
/// content-addressed `assets/`. Download URLs name the asset and are signed with this
/// process's key, so they are capabilities as Apple's are, until the server stops.
///
/// A staged file counts toward the quota of the database it is uploaded for until a save takes
/// it (the save moves it into the zone, where it counts as the record's) or its receipt expires
/// (``receiptLifetime``), when it is removed.
///
/// `@unchecked Sendable`: `slots` and `receipts` are only touched under `lock`.
final class AssetStaging: @unchecked Sendable {
    /// Where a staged asset may be used: the container, environment, database and identity
    /// of the request that made it.
    struct Owner: Equatable {
        var container: String
        var environment: Environment
        var scope: DatabaseScope
        var userName: String
    }

    struct Slot {
        var owner: Owner
        /// The database the upload is for, whose quota it counts toward.
        var database: Database
        var recordName: String
        var fieldName: String
        var expires: Date
    }

    struct Receipt {
        var owner: Owner
        var path: String
        var checksum: String
        var size: Int64
        var expires: Date
        /// Whether `path` is this server's own copy, removed when the receipt expires.
        var staged: Bool
    }

    /// Apple's upload URLs last 15 minutes; a receipt an hour by default, enough to save the record.
    static let slotLifetime: TimeInterval = 15 * 60
    let receiptLifetime: TimeInterval

    let directory: String
    private let key = SymmetricKey(size: .bits256)
    private let lock = NSLock()
    private var slots: [String: Slot] = [:]
    private var receipts: [String: Receipt] = [:]

    /// The staging folders of this machine's servers are `ckfs-serve-<pid>-<random>` in the
    /// temporary directory.
    static let folderPrefix = "ckfs-serve-"

    init(receiptLifetime: TimeInterval = 60 * 60) throws {
        self.receiptLifetime = receiptLifetime
        Self.sweep()
        directory = NSTemporaryDirectory() + Self.folderPrefix + "\(ProcessInfo.processInfo.processIdentifier)-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
    }

    /// The folder goes with the server when it stops (``WebServer`` calls
    /// ``removeFolder()``, and an object let go removes it too); one killed outright leaves it
    /// to the next server's ``sweep()``.
    deinit { removeFolder() }

    /// Removes the staging folder and what it holds: the server has stopped.
    func removeFolder() { try? FileManager.default.removeItem(atPath: directory) }

    /// Removes the staging folders of servers that ended without removing theirs (killed
    /// outright): each names its server's process, which no longer runs. Another user's
    /// folders (mode 0700) are left alone, as removing them fails.
    static func sweep() {
        let temp = NSTemporaryDirectory()
        guard case .success(let names?) = Syscall.listDirectory(temp) else { return }
        for name in names where name.hasPrefix(folderPrefix) {
            guard let pid = Int32(name.dropFirst(folderPrefix.count).prefix { $0 != "-" }), pid != ProcessInfo.processInfo.processIdentifier,
                  !Syscall.processExists(pid) else { continue }
            try? FileManager.default.removeItem(atPath: temp + name)
        }
    }

    // MARK: Uploads

    /// Open upload URLs one user may hold, and bytes staged for all users at once: past them,
    /// uploads are refused until receipts are used or expire.
    static let maxSlotsPerOwner = 1_000
    static let maxStagedBytes: Int64 = 2 << 30

    func openSlot(_ owner: Owner, database: Database, recordName: String, fieldName: String) throws(CKError) -> String {
        let id = Self.randomID()
        try locked { () throws(CKError) in
            dropExpired()
            guard slots.values.lazy.filter({ $0.owner == owner }).count < Self.maxSlotsPerOwner else {
                throw CKError(.limitExceeded, "\(Self.maxSlotsPerOwner) upload URLs are open for this user; upload to them or wait 15 minutes for them to expire")
            }
            slots[id] = Slot(owner: owner, database: database, recordName: recordName, fieldName: fieldName, expires: Date() + Self.slotLifetime)
        }
        return id
    }

    /// Whether an upload URL is open: checked before its bytes are read.
    func hasSlot(_ id: String) -> Bool {
        lock.withLock { slots[id].map { $0.expires > Date() } ?? false }
    }

    /// Takes the bytes of an upload: stages them and returns the receipt's ID, checksum and size.
    /// Refused (`quotaExceeded`) when the database's usage, with this owner's uploads no save
    /// has taken yet and these bytes, would pass its quota.
    func receive(slot id: String, bytes: [UInt8]) throws(CKError) -> (receipt: String, checksum: String, size: Int64) {
        guard let database = lock.withLock({ slots[id]?.database }) else {
            throw CKError(.unknownItem, "this upload URL is unknown, used or expired (they last 15 minutes and take one upload); ask assets/upload for another")
        }
        let used = try database.usage()
        let slot = try locked { () throws(CKError) -> Slot in
            dropExpired()
            guard let slot = slots.removeValue(forKey: id) else {
                throw CKError(.unknownItem, "this upload URL is unknown, used or expired (they last 15 minutes and take one upload); ask assets/upload for another")
            }
            let staged = receipts.values.reduce(Int64(0)) { $0 + ($1.staged ? $1.size : 0) }
            guard staged + Int64(bytes.count) <= Self.maxStagedBytes else {
                throw CKError(.quotaExceeded, "the server holds \(staged) bytes of uploads not yet saved in records; save them or wait for their receipts to expire")
            }
            let mine = receipts.values.reduce(Int64(0)) { $0 + ($1.staged && $1.owner == slot.owner ? $1.size : 0) }
            let quota = database.quotaBytes
            guard used + mine + Int64(bytes.count) <= quota else {
                throw CKError(.quotaExceeded, "uploading \(bytes.count) bytes would bring this \(database.scope.rawValue) database to \(used + mine + Int64(bytes.count)) bytes (\(used) in records, \(mine) in uploads no save has taken yet) past its quota of \(quota); delete records or assets to make room")
            }
            return slot
        }
        let checksum = Hex.string(SHA256.hash(data: bytes))
        let receipt = Self.randomID()
        let path = directory + "/" + receipt
        guard FileManager.default.createFile(atPath: path, contents: Data(bytes), attributes: [.posixPermissions: 0o600]) else {
            throw CKError(.internalError, "cannot stage the upload in \(directory)")
        }
        lock.withLock {
            receipts[receipt] = Receipt(owner: slot.owner, path: path, checksum: checksum, size: Int64(bytes.count),
                                        expires: Date() + receiptLifetime, staged: true)
        }
        return (receipt, checksum, Int64(bytes.count))
    }

    /// A receipt for an asset a record already holds (`assets/rereference`).
    func rereference(_ owner: Owner, path: String, checksum: String, size: Int64) -> String {
        let receipt = Self.randomID()
        lock.withLock {
            receipts[receipt] = Receipt(owner: owner, path: path, checksum: checksum, size: size,
                                        expires: Date() + receiptLifetime, staged: false)
        }
        return receipt
    }

    /// The file a receipt stands for, when `owner` may use it.
    func stagedFile(receipt: String, owner: Owner) throws(CKError) -> String {
        guard let r = lock.withLock({ () -> Receipt? in
            dropExpired()
            return receipts[receipt]
        }) else {
            throw CKError(.invalidArguments, "asset receipt \(receipt) is unknown or expired; upload the file again (assets/upload)")
        }
        guard r.owner == owner else {
            throw CKError(.invalidArguments, "asset receipt \(receipt) was given to another user, database or container")
        }
        return r.path
    }

    /// A save took the staged file at `path` into its zone, where it is `zoneFile`: the staged
    /// copy goes (it counts as the record's now), and its receipt names the zone's file, as
    /// `assets/rereference` gives, so another record may still take it.
    func saved(stagedPath path: String, as zoneFile: String) {
        // A staged file is named after its receipt (``receive(slot:bytes:)``).
        let id = String(path.dropFirst(directory.count + 1))
        let removed = lock.withLock { () -> Bool in
            guard let r = receipts[id], r.staged, r.path == path else { return false }
            receipts[id] = Receipt(owner: r.owner, path: zoneFile, checksum: r.checksum, size: r.size, expires: r.expires, staged: false)
            return true
        }
        if removed { try? FileManager.default.removeItem(atPath: path) }
    }

    /// Whether `path` is a file this server staged.
    func isStaged(_ path: String) -> Bool { path.hasPrefix(directory + "/") }

    /// Removes the uploads whose receipts expired; the server calls it from time to time.
    func dropExpiredUploads() { lock.withLock { dropExpired() } }

    /// `body` under `lock`, with its typed error.
    private func locked<T>(_ body: () throws(CKError) -> T) throws(CKError) -> T {
        lock.lock()
        defer { lock.unlock() }
        return try body()
    }

    /// Drops expired slots and receipts, and the files staged for them. Runs under `lock`.
    private func dropExpired() {
        let now = Date()
        slots = slots.filter { $0.value.expires > now }
        for (id, r) in receipts where r.expires <= now {
            if r.staged { try? FileManager.default.removeItem(atPath: r.path) }
            receipts[id] = nil
        }
    }

    // MARK: Downloads

    /// A signed download path for an asset of a record in `zone` (in the shared database, its
    /// owner's): `/assets/download/<what>.<signature>`.
    func downloadPath(_ owner: Owner, zone: ZoneID, asset: Asset) -> String {
        let what = [owner.container, owner.environment.rawValue, owner.scope.rawValue, owner.userName, zone.zoneName, zone.ownerName,
                    asset.fileChecksum, String(asset.size)]
            .map { Data($0.utf8).base64EncodedString() }.joined(separator: "~")
        let encoded = Self.base64url(Data(what.utf8))
        return "/assets/download/\(encoded).\(signature(encoded))"
    }

    /// What a download path names, when its signature is this server's.
    func download(_ token: String) -> (owner: Owner, zone: ZoneID, asset: Asset)? {
        let parts = token.split(separator: ".")
        guard parts.count == 2, let code = Self.unbase64url(String(parts[1])),
              HMAC<SHA256>.isValidAuthenticationCode(code, authenticating: Data(parts[0].utf8), using: key),
              let data = Self.unbase64url(String(parts[0])) else { return nil }
        let fields = String(decoding: data, as: UTF8.self).split(separator: "~", omittingEmptySubsequences: false)
            .map { Data(base64Encoded: String($0)).map { String(decoding: $0, as: UTF8.self) } }
        guard fields.count == 8, let c = fields[0], let e = fields[1].flatMap(Environment.init(rawValue:)),
              let s = fields[2].flatMap(DatabaseScope.init(rawValue:)), let u = fields[3], let z = fields[4], let o = fields[5],
              let k = fields[6], let n = fields[7].flatMap({ Int64($0) }) else { return nil }
        return (Owner(container: c, environment: e, scope: s, userName: u), ZoneID(zoneName: z, ownerName: o), Asset(fileChecksum: k, size: n))
    }

    private func signature(_ text: String) -> String {
        Self.base64url(Data(HMAC<SHA256>.authenticationCode(for: Data(text.utf8), using: key)))
    }

    private static func base64url(_ data: Data) -> String {
        data.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    private static func unbase64url(_ text: String) -> Data? {
        var s = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while s.count % 4 != 0 { s += "=" }
        return Data(base64Encoded: s)
    }

    private static func randomID() -> String {
        var generator = SystemRandomNumberGenerator()
        return Hex.string((0..<24).map { _ in UInt8.random(in: 0...255, using: &generator) })
    }
}
