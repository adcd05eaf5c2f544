import Foundation

extension ZoneFolder {
    /// A page of `query` answered from the zone's index file (``ZoneReading/indexed``): the
    /// index gives the names of the records that may match, in result order, and only those
    /// records are read, each checked against the whole predicate as the in-memory path checks
    /// it. Nil when the index cannot answer (a sort by distance, which the log says, or no
    /// usable index): the caller reads the zone into memory instead.
    ///
    /// Conditions the index cannot test (`NOT`, token search, distance, a value it does not
    /// keep) are left to the check of each record read: the query then reads records until its
    /// page is full, which the log says, since on a large zone that may be most of them.
    func indexedPage(of query: RecordQuery, types: [String: FieldType], limit: Int,
                     after: CursorPosition?) throws(CKError) -> QueryPage? {
        let zone = zoneID.zoneName
        var sort: [ZoneIndexFile.Sort] = []
        for d in query.sortDescriptors {
            guard d.relativeLocation == nil else {
                ZoneFolder.indexLogger.notice("query of \(query.recordType) in zone \(zone) is sorted by distance, which the index does not keep; the zone's records are read into memory to sort them")
                return nil
            }
            sort.append(ZoneIndexFile.Sort(key: d.key == "recordID" ? ZoneIndexFile.Sort.recordName : d.key, ascending: d.ascending))
        }
        let (conditions, unindexed) = Self.indexConditions(query.predicate, types: types)
        if unindexed > 0 {
            ZoneFolder.indexLogger.notice("query of \(query.recordType) in zone \(zone): \(unindexed) condition(s) of \(query.predicate) are not in the index; records are read to test them")
        }
        return try withCurrentIndex { (index) throws(CKError) -> QueryPage in
            try indexedPage(of: query, index: index, conditions: conditions, sort: sort, types: types, limit: limit, after: after)
        }
    }

    /// ``indexedPage(of:types:limit:after:)``'s page, from `index`, the zone's brought up to date.
    private func indexedPage(of query: RecordQuery, index: ZoneIndexFile, conditions: [ZoneIndexFile.Condition],
                             sort: [ZoneIndexFile.Sort], types: [String: FieldType], limit: Int,
                             after: CursorPosition?) throws(CKError) -> QueryPage {
        // `key == value` sorted by a field: a pair index of the two, when the zone keeps one,
        // walks only the matches. Without one, the sort key's order is walked; when that does
        // not fill the page (few records match) and the value matches enough records that
        // sorting them at every page costs more than keeping the pair, the pair is made.
        let pairing = Self.pairing(conditions, sort, type: query.recordType)
        var pairKept = false
        if let pairing, let lastUse = try index.read({ (reader) throws(CKError) in try reader.lastUse(of: pairing.pair) }) {
            pairKept = true
            notePairUse(pairing.pair, lastUse: lastUse, in: index)
        }
        // A value that no more records have than the page holds: its matches are found and
        // sorted at once, where the walk in sort order would read its whole bound of rows
        // looking for them (a value no record has, most of all).
        var few = false
        if let pairing, !pairKept {
            let (matches, work) = try index.read { (reader) throws(CKError) in
                try reader.count(type: pairing.pair.type, key: pairing.pair.key, value: pairing.value, upTo: limit + 1)
            }
            observers.walkWork?(work)
            few = matches <= limit
        }
        if !pairKept, !few, let page = try pageInSortOrder(of: query, index: index, conditions: conditions, sort: sort,
                                                           types: types, limit: limit, after: after) {
            observers.queryPlan?(.sortOrder)
            return page
        }
        if let pairing, !pairKept, !few {
            let threshold = tuning.pairIndexFromMatches
            let (matches, work) = try index.read { (reader) throws(CKError) in
                try reader.count(type: pairing.pair.type, key: pairing.pair.key, value: pairing.value, upTo: threshold)
            }
            observers.walkWork?(work)
            pairKept = matches >= threshold && keepPair(pairing.pair, in: index)
        }
        if let pairing, pairKept,
           let page = try pageInSortOrder(of: query, index: index, conditions: pairing.rest, sort: sort,
                                          types: types, limit: limit, after: after, pair: (pairing.pair, pairing.value)) {
            observers.queryPlan?(.pairOrder)
            return page
        }
        observers.queryPlan?(.matchesSorted)
        // Rows are taken from the index a batch at a time and the records read between
        // batches, so the index is never held while a record file is read. A batch that ends
        // before the page is full is followed by a larger one, from where it stopped.
        var position = after
        var batch = limit + 1
        var page: [SortedRecords.Entry] = []
        while true {
            var rows: [(name: String, values: [FieldValue?])] = []
            try index.read { (reader) throws(CKError) in
                try reader.select(type: query.recordType, where: conditions, sort: sort) { name, values in
                    let fieldValues = zip(query.sortDescriptors, values).map { d, v in Self.fieldValue(v, types[d.key]) }
                    if let position, RecordQuery.compare(fieldValues, name, position.values, position.recordName, query.sortDescriptors) <= 0 {
                        return true
                    }
                    rows.append((name, fieldValues))
                    return rows.count < batch
                }
            }
            for row in rows {
                guard let record = try record(named: row.name), record.recordType == query.recordType,
                      query.matches(record) else { continue }
                page.append(SortedRecords.Entry(values: query.sortDescriptors.map { $0.value(of: record) }, record: record))
                if page.count > limit { return QueryPage(entries: Array(page.prefix(limit)), more: true, grouped: false) }
            }
            guard rows.count == batch, let last = rows.last else { break }
            position = CursorPosition(recordName: last.name, values: last.values)
            batch = min(batch * 4, 1 << 16)
        }
        return QueryPage(entries: page, more: false, grouped: false)
    }

    /// A page found by walking the first sort key's values in order and testing each record,
    /// when that fills the page within a bounded walk (most records match); nil when it does
    /// not, and the matches are found first and sorted (``indexedPage``). Only records that
    /// have the first sort key are walked: the page must fill before the records without it,
    /// which sort last.
    ///
    /// With `pair`, the walk is of the pair index's rows for its value, and `conditions` are
    /// the others.
    private func pageInSortOrder(of query: RecordQuery, index: ZoneIndexFile,
                                 conditions: [ZoneIndexFile.Condition], sort: [ZoneIndexFile.Sort],
                                 types: [String: FieldType], limit: Int, after: CursorPosition?,
                                 pair: (ZoneIndexFile.Pair, SQLiteDatabase.Value)? = nil) throws(CKError) -> QueryPage? {
        guard let first = sort.first, first.key != ZoneIndexFile.Sort.recordName else { return nil }
        var from: SQLiteDatabase.Value?
        if let after {
            // A cursor among the records without the first key: past what this walk covers.
            guard let value = after.values.first ?? nil, let bound = ZoneIndexFile.indexValue(value) else { return nil }
            from = bound
        }
        let walk = Self.sortWalkRows * (limit + 1)
        // The index tests the conditions it keeps, so the first rows it gives usually fill the
        // page: rows are taken only until they may (SQLite steps no further), and more, from
        // the start again, only when records fail the conditions the index does not keep.
        var wanted = limit + 1
        while true {
            var rows: [(name: String, values: [FieldValue?])] = []
            var stopped = false
            let work = try index.read { (reader) throws(CKError) in
                try reader.selectInSortOrder(type: query.recordType, where: conditions, sort: sort, from: from, pair: pair, limit: walk) { name, values in
                    let fieldValues = zip(query.sortDescriptors, values).map { d, v in Self.fieldValue(v, types[d.key]) }
                    if let after, RecordQuery.compare(fieldValues, name, after.values, after.recordName, query.sortDescriptors) <= 0 {
                        return true
                    }
                    rows.append((name, fieldValues))
                    stopped = rows.count >= wanted
                    return !stopped
                }
            }
            observers.walkWork?(work)
            var page: [SortedRecords.Entry] = []
            for row in rows {
                guard let record = try record(named: row.name), record.recordType == query.recordType,
                      query.matches(record) else { continue }
                page.append(SortedRecords.Entry(values: query.sortDescriptors.map { $0.value(of: record) }, record: record))
                if page.count > limit { return QueryPage(entries: Array(page.prefix(limit)), more: true, grouped: false) }
            }
            guard stopped, wanted < walk else { return nil }
            wanted = min(wanted * 4, walk)
        }
    }

    /// How many rows per result a walk in sort order may take before the matches are found
    /// and sorted instead.
    static let sortWalkRows = 64

    /// The pair index a query could walk: its first `key == value` condition on a field and
    /// its first sort key, a field other than that one; with the value and the other
    /// conditions.
    static func pairing(_ conditions: [ZoneIndexFile.Condition], _ sort: [ZoneIndexFile.Sort], type: String)
        -> (pair: ZoneIndexFile.Pair, value: SQLiteDatabase.Value, rest: [ZoneIndexFile.Condition])? {
        guard let first = sort.first, first.key != ZoneIndexFile.Sort.recordName else { return nil }
        for (i, c) in conditions.enumerated() where c.key != ZoneIndexFile.Sort.recordName && c.key != first.key {
            guard case .compare("=", let value) = c.test else { continue }
            var rest = conditions
            rest.remove(at: i)
            return (ZoneIndexFile.Pair(type: type, key: c.key, sort: first.key), value, rest)
        }
        return nil
    }

    /// The conditions of `predicate` the index can test (those every match must meet), and how
    /// many it cannot.
    static func indexConditions(_ predicate: QueryPredicate, types: [String: FieldType]) -> ([ZoneIndexFile.Condition], Int) {
        var parts: [QueryPredicate] = []
        func flatten(_ p: QueryPredicate) {
            if case .and(let inner) = p { inner.forEach(flatten) } else if p != .all { parts.append(p) }
        }
        flatten(predicate)
        var conditions: [ZoneIndexFile.Condition] = []
        var unindexed = 0
        for part in parts {
            if !mixesNumbers(part, types), let c = indexCondition(part) { conditions.append(c) } else { unindexed += 1 }
        }
        return (conditions, unindexed)
    }

    /// Whether `part` compares an integer field with a double or a double field with an
    /// integer: the query compares them as doubles, SQLite exactly, which differ past 2^53, so
    /// such a condition is left to the check of each record.
    private static func mixesNumbers(_ part: QueryPredicate, _ types: [String: FieldType]) -> Bool {
        func mixed(_ key: String, _ values: [PredicateValue]) -> Bool {
            switch types[key]?.kind {
            case .int64?: values.contains { if case .double = $0 { true } else { false } }
            case .double?: values.contains { if case .int = $0 { true } else { false } }
            default: false
            }
        }
        switch part {
        case .compare(let k, _, let v), .contains(let k, let v): return mixed(k, [v])
        case .between(let k, let low, let high): return mixed(k, [low, high])
        case .isIn(let k, let values): return mixed(k, values)
        default: return false
        }
    }

    private static func indexCondition(_ part: QueryPredicate) -> ZoneIndexFile.Condition? {
        func key(_ k: String) -> String { k == "recordID" ? ZoneIndexFile.Sort.recordName : k }
        if part.keyUses.contains(where: { QueryPredicate.unindexedSystemKeys.contains($0.key) }) { return nil }
        switch part {
        case .compare(let k, let op, let v):
            guard let value = indexValue(v) else { return nil }
            return ZoneIndexFile.Condition(key: key(k), test: .compare(op == .equal ? "=" : op.rawValue, value))
        case .contains(let k, let v):
            guard let value = indexValue(v) else { return nil }
            return ZoneIndexFile.Condition(key: key(k), test: .compare("=", value))
        case .between(let k, let low, let high):
            guard let l = indexValue(low), let h = indexValue(high) else { return nil }
            return ZoneIndexFile.Condition(key: key(k), test: .between(l, h))
        case .isIn(let k, let values):
            let vs = values.compactMap(indexValue)
            guard vs.count == values.count, !vs.isEmpty else { return nil }
            return ZoneIndexFile.Condition(key: key(k), test: .oneOf(vs))
        case .beginsWith(let k, let prefix):
            return ZoneIndexFile.Condition(key: key(k), test: .prefix(prefix.canonicallyComposed))
        case .all, .and, .not, .tokens, .distance:
            return nil
        }
    }

    /// A predicate's constant as the index keeps values.
    private static func indexValue(_ v: PredicateValue) -> SQLiteDatabase.Value? {
        switch v {
        case .string(let s): .text(s.canonicallyComposed)
        case .int(let n): .int(n)
        case .date(let d): ZoneIndexFile.indexValue(of: d)
        case .double(let d): .double(d)
        case .reference(let name): .text(name.canonicallyComposed)
        case .location, .list: nil
        }
    }

    /// A value from the index as the field it was made from (`type` tells a string from a
    /// reference, and a date from a double).
    private static func fieldValue(_ v: SQLiteDatabase.Value, _ type: FieldType?) -> FieldValue? {
        switch (v, type?.kind) {
        case (.null, _): nil
        case (.text(let s), .reference?): .reference(Reference(recordName: s))
        case (.text(let s), _): .string(s)
        case (.double(let d), .timestamp?): .timestamp(Date(timeIntervalSinceReferenceDate: d))
        case (.int(let n), _): .int64(n)
        case (.double(let d), _): .double(d)
        }
    }
}
