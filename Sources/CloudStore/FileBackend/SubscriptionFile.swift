import Foundation

/// The subscriptions of one database in the file backend: `subscriptions.json` in the
/// database's folder, `{"format": 1, "subscriptions": [...]}` sorted by ID.
///
/// Every commit asks for the subscriptions of its database, so reading is cheap: the file's
/// bytes are compared with the last ones parsed (one failed `open` when there is no file),
/// and parsing happens only when they differ. Changes are read-modify-write under an
/// exclusive `flock` on `subscriptions.lock`, replacing the file the crash-safe way.
///
/// Its place in the store's lock order: docs/Durability.md#lock-orders.
/// `@unchecked Sendable`: its one `var`, `cached`, is behind `lock`.
final class SubscriptionFile: SubscriptionStorage, @unchecked Sendable {
    let directory: String
    let path: String
    let lockPath: String
    let ownerName: String
    private let writer: FileWriter
    /// Guards `cached`: the bytes last parsed and what they held.
    private let lock = NSLock()
    private var cached: (bytes: [UInt8], subscriptions: [Subscription]) = ([], [])

    init(directory: String, ownerName: String, writer: FileWriter) {
        self.directory = directory
        self.path = directory + "/subscriptions.json"
        self.lockPath = directory + "/subscriptions.lock"
        self.ownerName = ownerName
        self.writer = writer
    }

    /// Every subscription in the file now.
    func all() throws(CKError) -> [Subscription] {
        let bytes = try Syscall.readFile(path).orThrow(.internalError, "cannot read \(path)") ?? []
        lock.lock()
        defer { lock.unlock() }
        if bytes == cached.bytes { return cached.subscriptions }
        let parsed = try parse(bytes)
        cached = (bytes, parsed)
        return parsed
    }

    private func parse(_ bytes: [UInt8]) throws(CKError) -> [Subscription] {
        guard !bytes.isEmpty else { return [] }
        let json: JSONValue
        do { json = try JSONParser.parse(bytes) } catch {
            throw CKError(.badDatabase, "\(path) is not valid JSON (\(error)); fix it or restore it from a backup", cause: .syntax(error))
        }
        guard let list = json["subscriptions"]?.arrayValue else {
            throw CKError(.badDatabase, "\(path) has no \"subscriptions\" array; fix it or restore it from a backup")
        }
        var out: [Subscription] = []
        for item in list { out.append(try Subscription(json: item, file: path)) }
        return out
    }

    /// Runs `body` on the subscriptions under the file's lock and writes them back durably
    /// when it changed them; the folder is made first if it is not there yet.
    func update<T>(_ body: (inout [Subscription]) throws(CKError) -> T) throws(CKError) -> T {
        try writer.makeDirectories(directory)
        return try withFileLock(lockPath) { () throws(CKError) -> T in
            let before = try all()
            var subscriptions = before
            let result = try body(&subscriptions)
            guard subscriptions != before else { return result }
            subscriptions.sort { $0.subscriptionID < $1.subscriptionID }
            let json: JSONValue = .object([
                "format": .int(1),
                "subscriptions": .array(subscriptions.map { $0.json(ownerName: ownerName) }),
            ])
            let bytes = JSONWriter.pretty(json)
            try writer.replace(path, with: bytes, durable: true)
            lock.lock()
            cached = (bytes, subscriptions)
            lock.unlock()
            return result
        }
    }
}
