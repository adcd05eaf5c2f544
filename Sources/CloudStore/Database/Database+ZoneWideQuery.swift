import Foundation

extension Database {
    /// The records of `query` in every zone of the database, at most `limit`, after `cursor`
    /// when given: Web Services' `zoneWide` query.
    ///
    /// Results come in the query's sort order, ties broken by zone name, then record name, so
    /// that with no sort descriptors the zones come one after another. A page asks each zone
    /// for its own next page after the cursor and merges them; the cursor holds the last
    /// record's sort values, zone and name, so records saved or deleted meanwhile, in any
    /// zone, neither repeat nor shift a page.
    public func queryAllZones(_ query: RecordQuery, limit: Int = 100, cursor: QueryCursor? = nil,
                              desiredKeys: [String]? = nil) throws(CKError) -> QueryResult {
        guard scope != .shared else {
            throw CKError(.invalidArguments, "a query of the shared database names its zone (with its owner); query each shared zone on its own")
        }
        let after = try cursor.map { (c) throws(CKError) in try CursorPosition(c, for: query, zone: Self.allZones) }
        if let after, after.zoneName == nil { throw CKError(.invalidArguments, "the cursor is not one a query across zones gave") }
        var zones = Set(try zoneNames())
        zones.insert(ZoneID.defaultZoneName)
        var merged: [(zone: String, entry: SortedRecords.Entry, values: [FieldValue?])] = []
        var more = false
        for zone in zones.sorted() {
            let page = try self.page(of: query, in: zone, limit: limit, after: after.map { Self.position($0, seenFrom: zone) })
            more = more || page.more
            merged += page.entries.map { (zone, $0, page.sortValues($0)) }
        }
        let sort = query.sortDescriptors
        merged.sort { a, b in
            let byValues = RecordQuery.compare(a.values, "", b.values, "", sort)
            if byValues != 0 { return byValues < 0 }
            return (a.zone, a.entry.name) < (b.zone, b.entry.name)
        }
        if merged.count > limit {
            merged.removeLast(merged.count - limit)
            more = true
        }
        var next: QueryCursor?
        if more, let last = merged.last {
            next = CursorPosition(recordName: last.entry.name, values: last.values, zoneName: last.zone).cursor(for: query, zone: Self.allZones)
        }
        return QueryResult(records: merged.map { $0.entry.record.limited(to: desiredKeys) }, cursor: next)
    }

    /// Stands for every zone in a cursor's signature; no zone has this name.
    static let allZones = "\u{1}all zones"

    /// Where a zone's records resume after `cursor`, in the order (values, zone, name): in the
    /// cursor's zone after its record; in a zone before it, after every record with the same
    /// values (a name above any record name); in a zone after it, at the first record with
    /// the same values (a name below any record name).
    private static func position(_ cursor: CursorPosition, seenFrom zone: String) -> CursorPosition {
        guard let cursorZone = cursor.zoneName, zone != cursorZone else { return cursor }
        return CursorPosition(recordName: zone < cursorZone ? "\u{10FFFF}" : "", values: cursor.values)
    }
}
