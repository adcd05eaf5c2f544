/// The record names a writer knows its zone to hold, kept as 64-bit hashes: at a million
/// records of 36-character names (UUIDs) about 19 MB, where a `Set<String>` of them takes 126.
///
/// It answers only "certainly not in the zone": a name whose hash is not there was never
/// listed nor saved, so a save of it is a creation and needs no look at its file. A hash that
/// is there may be another name's (two in 2^64), or a name since deleted (deletions leave the
/// hash, since another name may share it): the file is then looked at, as it is without this.
struct KnownNames {
    private var hashes: Set<Int>

    init(_ names: some Sequence<String>) {
        hashes = Set(names.lazy.map(\.hashValue))
    }

    mutating func insert(_ name: String) { hashes.insert(name.hashValue) }

    /// Whether `name` may be in the zone: false only for a name never listed nor saved.
    func mayContain(_ name: String) -> Bool { hashes.contains(name.hashValue) }
}
