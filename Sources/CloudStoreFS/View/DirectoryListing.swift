import CloudStore

/// A directory's entries as listed at its first read, served from the open handle after.
///
/// A type folder keeps its records as names: each becomes an entry (its record read, its
/// attributes found) only when the kernel reads that far. A folder of a million records
/// then holds a million names while it is read, not a million records and their attributes.
struct DirectoryListing {
    /// The type folder the names are records of; nil for every other folder.
    var folder: RecordFolder?
    var names: [String] = []
    /// The entries after the records (files being made, scratch files), or every entry of
    /// a folder that is no type folder.
    var entries: [DirectoryEntry]

    /// Positions in the listing: the kernel's directory offsets.
    var count: Int { names.count + entries.count }
}

extension RecordFolder {
    func target(_ name: String) -> RecordTarget { RecordTarget(database: database, zone: zone, type: type, name: name) }
}
