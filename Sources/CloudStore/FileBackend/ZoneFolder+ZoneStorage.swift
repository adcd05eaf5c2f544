import Foundation

/// A zone folder is the file backend's ``ZoneStorage``.
extension ZoneFolder: ZoneStorage {
    /// From the lock file's commit marker, read without the zone's lock.
    func lastCommit() throws(CKError) -> ZoneCommitPoint? {
        try peekMarker().map { ZoneCommitPoint(seq: $0.seq, usage: $0.usage) }
    }

    /// From the listing of the record files (no record is read).
    func recordCount() throws(CKError) -> Int { try recordNames().count }

    func history(after seq: Int64, changeLimit limit: Int?, meta: ZoneMeta) throws(CKError) -> HistoryPage? {
        try history(after: seq, changeLimit: limit, meta: meta, withClientChangeToken: true)
    }

    /// Read from the index file when the store reads zones that way; else from the names
    /// listed once for the whole fetch (``namesForFirstFetch(epoch:startedAt:)``).
    func firstFetchNames(epoch: String, startedAt seq: Int64, after: String?, limit: Int?) throws(CKError) -> (names: ArraySlice<String>, more: Bool) {
        if reading.readsIndex, let found = try withCurrentIndex({ (index) throws(CKError) in
            try index.read { (reader) throws(CKError) in try reader.names(after: after, limit: limit.map { $0 + 1 } ?? -1) }
        }) {
            if let limit, found.count > limit { return (found[..<limit], true) }
            return (found[...], false)
        }
        let all = try namesForFirstFetch(epoch: epoch, startedAt: seq)
        var first = 0
        if let after {
            // The first name past `after`, by binary search in the sorted names.
            var high = all.count
            while first < high {
                let mid = (first + high) / 2
                if all[mid] <= after { first = mid + 1 } else { high = mid }
            }
        }
        var end = all.count
        var more = false
        if let limit, end - first > limit {
            end = first + limit
            more = true
        }
        return (all[first..<end], more)
    }

    /// From the index file when the store reads zones that way and the index can answer
    /// (``indexedPage(of:types:limit:after:)``); else from the zone's catalog, which keeps
    /// each type's records in the order of each sort asked for (`SortedRecords`), so a page
    /// costs the records walked past to fill it, not a sort of the type.
    func page(of query: RecordQuery, types: [String: FieldType], limit: Int, after: CursorPosition?) throws(CKError) -> QueryPage {
        if reading.readsIndex, let page = try indexedPage(of: query, types: types, limit: limit, after: after) {
            return page
        }
        let zoneRecords = fileCatalog()
        try zoneRecords.refresh()
        let sort = query.sortDescriptors
        // Walk the type's records in result order (kept sorted by the catalog) and stop after
        // one record more than the page: the cost is the records walked past, not the zone.
        // With `key == value` among the conditions, the records are kept sorted by that key
        // first, and only the run holding the value is walked (an index on (key, sort…)).
        let group = RecordQuery.equalityGroup(query.predicate, types)
        let order = (group.map { [QuerySortDescriptor(key: $0.key)] } ?? []) + sort
        let (entries, more) = try zoneRecords.withSortedRecords(ofType: query.recordType, by: order) { sorted in
            var first = 0
            var last = sorted.entries.count
            if let group {
                first = sorted.partitionPoint { RecordQuery.before(group.value, $0.values[0]) }
                last = sorted.partitionPoint { !RecordQuery.after(group.value, $0.values[0]) }
            }
            if let after {
                first = max(first, sorted.partitionPoint { e in
                    if let group {
                        if RecordQuery.before(group.value, e.values[0]) { return true }
                        if RecordQuery.after(group.value, e.values[0]) { return false }
                    }
                    let values = group == nil ? e.values : Array(e.values.dropFirst())
                    return RecordQuery.compare(values, e.name, after.values, after.recordName, sort) <= 0
                })
            }
            var page: [SortedRecords.Entry] = []
            for entry in sorted.entries[first..<max(first, last)] where query.matches(entry) {
                if page.count == limit { return (page, true) }
                page.append(entry)
            }
            return (page, false)
        }
        return QueryPage(entries: entries, more: more, grouped: group != nil)
    }

    /// `assets/<checksum>` in the zone's folder.
    func assetFile(_ checksum: String) throws(CKError) -> String? {
        storedAssetSize(checksum) == nil ? nil : StoreLayout.assetFile(directory, checksum: checksum)
    }

    /// The zone's `assets/`, which holds every asset of the zone.
    func assetFolder(holding checksums: [String]) throws(CKError) -> String { StoreLayout.assetsDirectory(directory) }

    func catalog() -> any ZoneCatalog { fileCatalog() }

    /// The zone's one catalog for this store object, made at the first ask.
    func fileCatalog() -> ZoneFileCatalog {
        if let kept = catalogSlot.withLock({ $0.catalog }) { return kept }
        let made = ZoneFileCatalog(storage: self)
        return catalogSlot.withLock { slot in
            if let kept = slot.catalog { return kept }
            if !slot.retired { slot.catalog = made }
            return made
        }
    }

    /// Lets the catalog go (it holds this zone), and keeps none made after: the zone was
    /// deleted and forgotten, or its store object goes.
    func dropCatalog() { catalogSlot.withLock { $0 = (nil, true) } }
}
