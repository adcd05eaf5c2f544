import Foundation

/// One user's key-value store as a backend keeps it: a dictionary within Apple's limits (1,024
/// keys, 1 MB), small enough to be read whole, changed atomically against what is kept now.
package protocol KeyValueStorage: Sendable {
    /// The limits every change is kept within.
    var limits: KeyValueLimits { get }

    /// The version kept now, found without reading the entries; nil when nothing is kept yet.
    func version() throws(CKError) -> KeyValueVersion?

    /// Everything kept, with its version; no entries and no version when nothing is kept yet.
    func read() throws(CKError) -> KeyValueSnapshot

    /// Changes the store atomically: `body` gets what is kept now and changes it, each change
    /// checked against the limits by ``KeyValueEntries``; the result is kept durably before
    /// this returns. Nothing is written when `body` throws or changes nothing. Returns what
    /// is kept now and `body`'s result.
    @discardableResult
    func update<T>(_ body: (inout KeyValueEntries) throws(CKError) -> T) throws(CKError) -> (snapshot: KeyValueSnapshot, result: T)
}

/// One version of a key-value store. Equal versions hold equal entries; a write through any
/// client, or an edit by hand, makes a new one.
package struct KeyValueVersion: Sendable, Equatable {
    /// Raised by every write through ckfs.
    package var generation: Int64
    /// When this version was written, in milliseconds since 1970.
    package var modifiedMilliseconds: Int64
    /// What else the backend tells versions apart by (the file's inode, size and change time:
    /// a hand edit keeps the generation, and an inode may be used again within a clock tick).
    package var stamp: [Int64]

    package init(generation: Int64, modifiedMilliseconds: Int64, stamp: [Int64]) {
        self.generation = generation
        self.modifiedMilliseconds = modifiedMilliseconds
        self.stamp = stamp
    }
}

/// A key-value store's entries as read, with the version read.
package struct KeyValueSnapshot: Sendable {
    package var entries: [String: PropertyListValue]
    /// Nil when nothing was kept.
    package var version: KeyValueVersion?
    package var generation: Int64 { version?.generation ?? 0 }

    package init(entries: [String: PropertyListValue], version: KeyValueVersion?) {
        self.entries = entries
        self.version = version
    }
}
