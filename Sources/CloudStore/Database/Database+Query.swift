import Foundation

extension Database {
    /// The records of `query` in `zone`, at most `limit`, after `cursor` when given, with only
    /// `desiredKeys` among their fields when given.
    ///
    /// The query is checked against the schema here; the zone's storage finds the page
    /// (`ZoneStorage.page(of:types:limit:after:)`).
    public func query(_ query: RecordQuery, in zone: String = ZoneID.defaultZoneName, limit: Int = 100,
                      cursor: QueryCursor? = nil, desiredKeys: [String]? = nil) throws(CKError) -> QueryResult {
        let after = try cursor.map { (c) throws(CKError) in try CursorPosition(c, for: query, zone: zone) }
        if scope == .shared { return try sharedQuery(query, in: zone, limit: limit, after: after, desiredKeys: desiredKeys) }
        let page = try self.page(of: query, in: zone, limit: limit, after: after)
        var next: QueryCursor?
        if page.more, let last = page.entries.last {
            next = CursorPosition(recordName: last.name, values: page.sortValues(last)).cursor(for: query, zone: zone)
        }
        return QueryResult(records: page.entries.map { $0.record.limited(to: desiredKeys) }, cursor: next)
    }

    /// A query in a shared database: the records shared with the caller, walked page after
    /// page until `limit` of them are found. The cursor is made from the last of those, never
    /// from a record walked past, whose name and values are not the caller's to see.
    private func sharedQuery(_ query: RecordQuery, in zone: String, limit: Int, after: CursorPosition?,
                             desiredKeys: [String]?) throws(CKError) -> QueryResult {
        var position = after
        let grants = try currentGrants(zone)
        var found: [(record: Record, at: CursorPosition)] = []
        // Whether more remain is whether one more shared record does: a record walked past
        // must not decide it either.
        walking: while true {
            let page = try self.page(of: query, in: zone, limit: limit, after: position)
            let shown = Set(try visible(page.entries.map(\.record), in: zone, grants: grants).map(\.recordID.recordName))
            for entry in page.entries where shown.contains(entry.name) {
                found.append((entry.record, CursorPosition(recordName: entry.name, values: page.sortValues(entry))))
                if found.count > limit { break walking }
            }
            guard page.more, let last = page.entries.last else { break }
            position = CursorPosition(recordName: last.name, values: page.sortValues(last))
        }
        let more = found.count > limit
        if more { found.removeLast(found.count - limit) }
        let next = more ? found.last?.at.cursor(for: query, zone: zone) : nil
        return QueryResult(records: found.map { $0.record.limited(to: desiredKeys) }, cursor: next)
    }

    /// At most `limit` records of `query` in `zone` after `after`, and whether more remain.
    func page(of query: RecordQuery, in zone: String, limit: Int, after: CursorPosition?) throws(CKError) -> QueryPage {
        guard limit > 0 else { throw CKError(.invalidArguments, "a query's result limit must be at least 1") }
        guard query.recordType != Schema.usersRecordType else {
            throw CKError(.invalidArguments, "records of type Users cannot be queried; fetch a user record by its ID (ckfs user whoami shows yours), or discover users (ckfs user discover)")
        }
        // Shares are the store's own type, in no schema; the store lists them for sharing.
        let isShare = query.recordType == ShareInfo.recordType
        let types = isShare ? [:] : try checkAgainstSchema(query)
        var query = query
        if query.predicate.searchesWords && !isShare { query.searchableFields = try searchableFields(of: query.recordType) }
        return try zoneStorage(zone).page(of: query, types: types, limit: limit, after: after)
    }

    /// Fails, naming the problem, for a type the schema does not know, a field the type does
    /// not have, or a field used in a way its type does not allow.
    @discardableResult
    func checkAgainstSchema(_ query: RecordQuery) throws(CKError) -> [String: FieldType] {
        let named = query.predicate.keyUses.map(\.key) + query.sortDescriptors.map(\.key)
        guard let fields = try container.schema.fields(of: query.recordType, environment: environment,
                                                       including: named.filter { !QueryPredicate.systemKeys.contains($0) }) else {
            throw CKError(.unknownItem, "no record type \(query.recordType) in the \(environment.rawValue) schema; save a record of that type first, or check the name")
        }
        var types: [String: FieldType] = [:]
        func kind(_ key: String) throws(CKError) -> FieldType? {
            if QueryPredicate.systemKeys.contains(key) {
                types[key] = key.hasSuffix("Date") ? FieldType(.timestamp) : FieldType(.reference)
                return types[key]
            }
            guard let t = fields[key] else {
                throw CKError(.invalidArguments, "record type \(query.recordType) has no field \"\(key)\"; its fields are \(fields.keys.sorted().joined(separator: ", "))")
            }
            guard !t.isEncrypted else {
                throw CKError(.invalidArguments, "field \"\(key)\" of record type \(query.recordType) has a value type of \(t.name) and cannot be queried or sorted by: "
                    + "the server cannot read an encrypted field, so it keeps no index of it; filter and sort such values on the client after fetching")
            }
            types[key] = t
            return t
        }
        for (key, use) in query.predicate.keyUses {
            guard let t = try kind(key) else { continue }
            switch use {
            case .prefix:
                guard t.kind == .string else { throw CKError(.invalidArguments, "BEGINSWITH needs a string field; \(key) is \(t.name)") }
            case .distance:
                guard t.kind == .location else { throw CKError(.invalidArguments, "distanceToLocation:fromLocation: needs a location field; \(key) is \(t.name)") }
            case .compared(let v):
                guard Self.comparable(t.kind, v) else {
                    throw CKError(.invalidArguments, "\(key) is \(t.name) and cannot be compared with \(v)")
                }
            }
        }
        for d in query.sortDescriptors {
            if QueryPredicate.unindexedSystemKeys.contains(d.key) {
                throw CKError(.invalidArguments, "results cannot be sorted by \(d.key): a query may test it, not sort by it")
            }
            guard let t = try kind(d.key) else { continue }
            if let point = d.relativeLocation {
                guard t == FieldType(.location) else {
                    throw CKError(.invalidArguments, "results can be sorted by distance only from a location field; \(d.key) is \(t.name)")
                }
                guard (-90...90).contains(point.latitude), (-180...180).contains(point.longitude) else {
                    throw CKError(.invalidArguments, "a distance sort needs a point with latitude in -90…90 and longitude in -180…180, not \(point.latitude), \(point.longitude)")
                }
                continue
            }
            guard !t.isList, [.string, .int64, .double, .timestamp, .reference].contains(t.kind) else {
                throw CKError(.invalidArguments, "results cannot be sorted by \(d.key), a \(t.name) field")
            }
        }
        try checkIndexes(query)
        return types
    }

    /// Fails, naming the index and how to add it, when the query uses a field in a way its
    /// schema indexes do not allow (CloudKit's "not marked queryable"). System fields are
    /// always indexed.
    private func checkIndexes(_ query: RecordQuery) throws(CKError) {
        let type = query.recordType
        let indexes = try container.schema.indexes(of: type, environment: environment) ?? [:]
        func require(_ index: SchemaIndex, _ key: String, for use: String) throws(CKError) {
            guard !QueryPredicate.systemKeys.contains(key), !(indexes[key] ?? []).contains(index) else { return }
            throw CKError(.invalidArguments, "field \"\(key)\" of record type \(type) is not marked \(index.word) in the \(environment.rawValue) schema, so a query cannot \(use) it; "
                + "add the index with `ckfs schema index add \(type) \(key) \(index.word)`" + (environment == .production ? " in development, then `ckfs schema deploy`" : ""))
        }
        for need in query.predicate.indexNeeds {
            guard let key = need.key else {
                guard indexes.values.contains(where: { $0.contains(.searchable) }) else {
                    throw CKError(.invalidArguments, "record type \(type) has no string field marked searchable in the \(environment.rawValue) schema, so a query cannot search its words; "
                        + "add the index with `ckfs schema index add \(type) FIELD searchable`" + (environment == .production ? " in development, then `ckfs schema deploy`" : ""))
                }
                continue
            }
            try require(need.index, key, for: need.index == .queryable ? "test its value" : "compare its range")
        }
        for d in query.sortDescriptors { try require(.sortable, d.key, for: "sort by") }
    }

    /// The fields a word search of records of `type` reads: its strings (and lists of strings)
    /// marked `SEARCHABLE` in this environment's schema, as CloudKit searches only those.
    func searchableFields(of type: String) throws(CKError) -> Set<String> {
        // Only strings can be searchable (`SchemaIndex.applicable(to:)`, and `setIndex` refuses
        // other types).
        Set((try container.schema.indexes(of: type, environment: environment) ?? [:]).filter { $0.value.contains(.searchable) }.keys)
    }

    static func comparable(_ kind: FieldType.Kind, _ v: PredicateValue) -> Bool {
        switch (kind, v) {
        case (_, .list(let items)): return items.allSatisfy { comparable(kind, $0) }
        case (.string, .string), (.int64, .int), (.int64, .double), (.double, .int), (.double, .double),
             (.timestamp, .date), (.reference, .reference), (.reference, .string): return true
        default: return false
        }
    }
}
