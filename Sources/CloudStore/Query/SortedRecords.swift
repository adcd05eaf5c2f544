/// The records of one type in one query order (its sort keys, then the record name), kept by
/// a ``ZoneCatalog`` between queries so a query walks records in result order and stops after
/// its page, instead of matching and ranking every record of the type.
///
/// Built on first use; afterwards the catalog notes each change and the next query settles
/// them: a few by binary search (remove the old place, insert the new), many in one pass that
/// drops the changed names and merges their new places in, so a batch costs O(n), never a
/// full sort.
struct SortedRecords {
    /// One record and its sort values, read once. A class: inserting into 100,000 entries
    /// moves pointers, not records, and a query reads the record in place instead of copying
    /// it for every record it walks past.
    final class Entry: Sendable {
        let values: [FieldValue?]
        let record: Record
        let name: String

        init(values: [FieldValue?], record: Record) {
            self.values = values
            self.record = record
            self.name = record.recordID.recordName
        }
    }

    let recordType: String
    let sort: [QuerySortDescriptor]
    private(set) var entries: [Entry] = []
    /// Changes not yet settled, in the order they happened: the record as it was (if it was of
    /// this type) and as it is (if it is).
    private var pending: [(old: Record?, new: Record?)] = []

    /// When a query last used the list (the catalog's clock), for dropping the least used.
    var lastUse: UInt64 = 0

    /// Above this many pending changes, settling is one pass over all entries.
    static let mergeThreshold = 64

    init(recordType: String, sort: [QuerySortDescriptor], records: some Sequence<Record>) {
        self.recordType = recordType
        self.sort = sort
        entries = records.filter { $0.recordType == recordType }.map(entry)
        entries.sort { Self.compare($0, $1, sort) < 0 }
    }

    private func entry(_ record: Record) -> Entry {
        Entry(values: sort.map { $0.value(of: record) }, record: record)
    }

    /// Notes that a record changed from `old` to `new` (nil: absent).
    mutating func note(old: Record?, new: Record?) {
        let old = old?.recordType == recordType ? old : nil
        let new = new?.recordType == recordType ? new : nil
        guard old != nil || new != nil else { return }
        pending.append((old, new))
    }

    /// How many changes wait to be settled.
    var pendingCount: Int { pending.count }

    /// Brings the entries up to every noted change. `current` gives a record as it is now
    /// (the catalog's map), for the one-pass merge.
    mutating func settle(current: (String) -> Record?) {
        guard !pending.isEmpty else { return }
        defer { pending = [] }
        if pending.count <= Self.mergeThreshold {
            var ok = true
            for (old, new) in pending where ok {
                if let old { ok = remove(entry(old)) }
                if let new, ok { insert(entry(new)) }
            }
            if ok { return }
            // An old value not found where it should be: fall through to the pass that
            // needs no old values.
        }
        var changed = Set<String>()
        for (old, new) in pending {
            if let name = (old ?? new)?.recordID.recordName { changed.insert(name) }
        }
        let kept = entries.filter { !changed.contains($0.name) }
        let added = changed.compactMap(current).filter { $0.recordType == recordType }.map(entry)
            .sorted { Self.compare($0, $1, sort) < 0 }
        entries = Self.merge(kept, added, sort)
    }

    /// The index of the first entry for which `isBefore` is false; `isBefore` must hold for
    /// a prefix of the entries and for nothing after it.
    func partitionPoint(_ isBefore: (Entry) -> Bool) -> Int {
        var low = 0, high = entries.count
        while low < high {
            let mid = (low + high) / 2
            if isBefore(entries[mid]) { low = mid + 1 } else { high = mid }
        }
        return low
    }

    private func position(of e: Entry) -> Int {
        var low = 0, high = entries.count
        while low < high {
            let mid = (low + high) / 2
            if Self.compare(entries[mid], e, sort) < 0 { low = mid + 1 } else { high = mid }
        }
        return low
    }

    private mutating func remove(_ e: Entry) -> Bool {
        let i = position(of: e)
        guard i < entries.count, entries[i].name == e.name else { return false }
        entries.remove(at: i)
        return true
    }

    private mutating func insert(_ e: Entry) {
        entries.insert(e, at: position(of: e))
    }

    static func compare(_ a: Entry, _ b: Entry, _ sort: [QuerySortDescriptor]) -> Int {
        RecordQuery.compare(a.values, a.name, b.values, b.name, sort)
    }

    private static func merge(_ a: [Entry], _ b: [Entry], _ sort: [QuerySortDescriptor]) -> [Entry] {
        if b.isEmpty { return a }
        var out: [Entry] = []
        out.reserveCapacity(a.count + b.count)
        var (i, j) = (0, 0)
        while i < a.count, j < b.count {
            if compare(a[i], b[j], sort) <= 0 { out.append(a[i]); i += 1 } else { out.append(b[j]); j += 1 }
        }
        out.append(contentsOf: a[i...])
        out.append(contentsOf: b[j...])
        return out
    }
}

extension SortedRecords.Entry: QueryFieldSource {
    /// Stored fields first, read in place; only a system field (`recordID`, dates, users)
    /// hands the whole record to `QueryPredicate.field`, which copies it.
    func queryValue(_ key: String) -> FieldValue? { record.fields[key] ?? QueryPredicate.field(key, of: record) }
    var searchedFields: [String: FieldValue] { record.searchedFields }
}
