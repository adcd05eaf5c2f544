/// A container's schema as a backend keeps it, read whole (it is small) and changed atomically
/// against what is kept now. ``Schema`` keeps it in memory and decides what may change.
package protocol SchemaStorage: Sendable {
    /// The version kept now, cheaply: readers ask it to learn whether another process changed it.
    func version() throws(CKError) -> SchemaVersion

    /// The schema kept now, with its version (taken before the read: a change meanwhile shows
    /// as a new version at the next look).
    func read() throws(CKError) -> (document: SchemaDocument, version: SchemaVersion)

    /// Runs `body` on the schema kept now and keeps it durably when `body` changed it; returns
    /// `body`'s result and the schema kept now.
    func update<T>(_ body: (inout SchemaDocument) throws(CKError) -> T) throws(CKError) -> (result: T, document: SchemaDocument)
}

/// Each environment's record types, with the type of each of their fields, and the indexes set
/// by hand (record type → field → the indexes it has).
package struct SchemaDocument: Sendable, Equatable {
    package var types: [Environment: [String: [String: FieldType]]] = [:]
    package var indexes: [Environment: [String: [String: Set<SchemaIndex>]]] = [:]

    package init() {}

    /// Indexes as `schema.json` and `ckfs schema show` write them: lists of index names, sorted.
    package static func json(_ indexes: [String: [String: Set<SchemaIndex>]]) -> JSONValue {
        .object(indexes.mapValues { .object($0.mapValues { .array($0.sorted().map { .string($0.rawValue) }) }) })
    }
}

/// One version of a kept schema: equal versions hold equal schemas.
package struct SchemaVersion: Sendable, Equatable {
    /// What the backend tells versions apart by (the file's inode and size).
    package var stamp: [Int64]

    package init(stamp: [Int64]) { self.stamp = stamp }
}
