import Foundation

/// A container's schema in the file backend: `schema.json`, changed under an exclusive `flock`
/// on `schema.json.lock` and replaced the crash-safe way, so every write makes a new inode.
struct SchemaFile: SchemaStorage {
    let path: String
    let writer: FileWriter

    /// The file's inode and size; [0, -1] when there is none.
    func version() throws(CKError) -> SchemaVersion {
        let status = try Syscall.stat(path).orThrow(.internalError, "cannot look at \(path)")
        return SchemaVersion(stamp: status.map { [Int64(bitPattern: $0.inode), $0.size] } ?? [0, -1])
    }

    func read() throws(CKError) -> (document: SchemaDocument, version: SchemaVersion) {
        let version = try version()
        let json = try readJSONFile(path)
        var document = SchemaDocument()
        for env in Environment.allCases {
            var types: [String: [String: FieldType]] = [:]
            for (typeName, fields) in json?[env.rawValue]?.objectValue ?? [:] {
                var fs: [String: FieldType] = [:]
                for (k, v) in fields.objectValue ?? [:] { if let n = v.stringValue, let t = FieldType(name: n) { fs[k] = t } }
                types[typeName] = fs
            }
            document.types[env] = types
            var indexes: [String: [String: Set<SchemaIndex>]] = [:]
            for (typeName, fields) in json?["indexes"]?[env.rawValue]?.objectValue ?? [:] {
                for (k, v) in fields.objectValue ?? [:] {
                    indexes[typeName, default: [:]][k] = Set((v.arrayValue ?? []).compactMap { $0.stringValue.flatMap(SchemaIndex.init(rawValue:)) })
                }
            }
            document.indexes[env] = indexes
        }
        return (document, version)
    }

    func update<T>(_ body: (inout SchemaDocument) throws(CKError) -> T) throws(CKError) -> (result: T, document: SchemaDocument) {
        try withFileLock(path + ".lock") { () throws(CKError) -> (result: T, document: SchemaDocument) in
            let before = try read().document
            var document = before
            let result = try body(&document)
            if document != before { try write(document) }
            return (result, document)
        }
    }

    private func write(_ document: SchemaDocument) throws(CKError) {
        var o: [String: JSONValue] = ["format": .int(1)]
        var indexJSON: [String: JSONValue] = [:]
        for env in Environment.allCases {
            o[env.rawValue] = .object((document.types[env] ?? [:]).mapValues { .object($0.mapValues { .string($0.name) }) })
            if let set = document.indexes[env], !set.isEmpty { indexJSON[env.rawValue] = SchemaDocument.json(set) }
        }
        if !indexJSON.isEmpty { o["indexes"] = .object(indexJSON) }
        try writer.replace(path, with: JSONWriter.pretty(.object(o)), durable: true)
    }
}
