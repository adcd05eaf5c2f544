import Foundation

/// A container: its users, quotas, schema and databases (C1, C2, C9).
public final class Container: @unchecked Sendable {
    public let identifier: String
    let store: Store
    public let schema: Schema
    var directory: String { store.layout.containerDirectory(identifier) }
    var infoPath: String { store.layout.containerFile(identifier) }
    var lockPath: String { directory + "/lock" }

    /// Guards `users` and `quotas`.
    private let lock = NSLock()
    /// Local identity name → user record name (`_` + opaque id), C3.
    private var users: [String: String] = [:]
    private var quotas: (privateBytes: Int64, publicBytes: Int64)

    init(store: Store, identifier: String) throws(CKError) {
        self.store = store
        self.identifier = identifier
        self.schema = Schema(path: store.layout.schemaFile(identifier), writer: store.writer)
        self.quotas = (store.settings.privateQuotaBytes, store.settings.publicQuotaBytes)
        try store.ensureDirectory(directory)
        if try readJSONFile(infoPath) == nil {
            try withFileLock(lockPath) { () throws(CKError) in
                if try readJSONFile(infoPath) == nil { try writeInfo(users: [:], quotas: quotas) }
            }
        }
        try reload()
    }

    private func reload() throws(CKError) {
        guard let json = try readJSONFile(infoPath) else { return }
        var found: [String: String] = [:]
        for u in json["users"]?.arrayValue ?? [] {
            if let name = u["name"]?.stringValue, let id = u["userRecordName"]?.stringValue { found[name] = id }
        }
        let p = json["quotas"]?["privateBytes"]?.int64Value ?? store.settings.privateQuotaBytes
        let q = json["quotas"]?["publicBytes"]?.int64Value ?? store.settings.publicQuotaBytes
        lock.withLock {
            users = found
            quotas = (p, q)
        }
    }

    private func writeInfo(users: [String: String], quotas: (privateBytes: Int64, publicBytes: Int64)) throws(CKError) {
        let json: JSONValue = .object([
            "identifier": .string(identifier),
            "format": .int(1),
            "quotas": .object(["privateBytes": .int(quotas.privateBytes), "publicBytes": .int(quotas.publicBytes)]),
            "users": .array(users.sorted { $0.key < $1.key }.map { .object(["name": .string($0.key), "userRecordName": .string($0.value)]) }),
        ])
        try store.writer.replace(infoPath, with: JSONWriter.pretty(json), durable: true)
    }

    /// The stable user record name of a local identity in this container, enrolled on first use (C3).
    public func userRecordName(for userName: String) throws(CKError) -> String {
        guard !userName.isEmpty else { throw CKError(.notAuthenticated, "no user is signed in") }
        if let id = lock.withLock({ users[userName] }) { return id }
        return try withFileLock(lockPath) { () throws(CKError) -> String in
            try reload()
            if let id = lock.withLock({ users[userName] }) { return id }
            var bytes = [UInt8](repeating: 0, count: 16)
            for i in bytes.indices { bytes[i] = UInt8.random(in: 0...255) }
            let id = "_" + bytes.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
            var all = lock.withLock { users }
            all[userName] = id
            try writeInfo(users: all, quotas: lock.withLock { quotas })
            lock.withLock { users[userName] = id }
            return id
        }
    }

    /// Local identities and their user record names.
    public func knownUsers() throws(CKError) -> [(name: String, userRecordName: String)] {
        try reload()
        return lock.withLock { users.sorted { $0.key < $1.key }.map { ($0.key, $0.value) } }
    }

    /// Sets the quotas of this container (C9): each user's private data and all public data.
    public func setQuotas(privateBytes: Int64?, publicBytes: Int64?) throws(CKError) {
        try withFileLock(lockPath) { () throws(CKError) in
            try reload()
            var q = lock.withLock { quotas }
            if let p = privateBytes { q.privateBytes = p }
            if let p = publicBytes { q.publicBytes = p }
            try writeInfo(users: lock.withLock { users }, quotas: q)
            lock.withLock { quotas = q }
        }
    }

    public var privateQuotaBytes: Int64 { lock.withLock { quotas.privateBytes } }
    public var publicQuotaBytes: Int64 { lock.withLock { quotas.publicBytes } }

    /// A database of this container as `caller` sees it.
    public func database(_ scope: DatabaseScope, caller: Caller, environment: Environment = .development) throws(CKError) -> Database {
        let userRecordName = try userRecordName(for: caller.userName)
        return try Database(container: self, scope: scope, environment: environment, caller: caller, userRecordName: userRecordName)
    }
}
