import Foundation

/// What a predicate reads of a record.
protocol QueryFieldSource {
    /// A field's value, or a system field's (``QueryPredicate/field(_:of:)``).
    func queryValue(_ key: String) -> FieldValue?
    /// The fields token search reads: the stored fields but encrypted ones, which the server
    /// cannot read.
    var searchedFields: [String: FieldValue] { get }
}

extension Record: QueryFieldSource {
    func queryValue(_ key: String) -> FieldValue? { QueryPredicate.field(key, of: self) }
    var searchedFields: [String: FieldValue] { encryptedKeys.isEmpty ? fields : fields.filter { !encryptedKeys.contains($0.key) } }
}

/// Whether a record matches a predicate.
///
/// A record without the field matches no comparison on it, `!=` included. A comparison of
/// values of unlike kinds (a string with a number) does not match. A list field matches a
/// comparison when one of its elements does, as CloudKit treats list fields.
extension QueryPredicate {
    /// Whether `record` matches; a token search reads the fields in `searched` (its type's
    /// searchable strings, as `Database.searchableFields(of:)` finds them), or every field
    /// when nil.
    public func matches(_ record: Record, searching searched: Set<String>? = nil) -> Bool { evaluate(record, searching: searched) }

    /// `matches` over anything that reads fields: a query walking a catalog's sorted records
    /// passes their entries (a class), which a 176-byte record struct was copied for
    /// on every test.
    func evaluate<Source: QueryFieldSource>(_ record: Source, searching searched: Set<String>? = nil) -> Bool {
        switch self {
        case .all: return true
        case .and(let parts):
            // A loop, not allSatisfy: the closure copied the record too.
            for part in parts where !part.evaluate(record, searching: searched) { return false }
            return true
        case .not(let inner): return !inner.evaluate(record, searching: searched)
        case .compare(let key, let op, let value):
            return Self.any(record.queryValue(key)) { f in
                guard let order = Self.order(f, value) else { return false }
                switch op {
                case .equal: return order == 0
                case .notEqual: return order != 0
                case .less: return order < 0
                case .lessOrEqual: return order <= 0
                case .greater: return order > 0
                case .greaterOrEqual: return order >= 0
                }
            }
        case .between(let key, let low, let high):
            return Self.any(record.queryValue(key)) { f in
                guard let a = Self.order(f, low), let b = Self.order(f, high) else { return false }
                return a >= 0 && b <= 0
            }
        case .isIn(let key, let values):
            return Self.any(record.queryValue(key)) { f in values.contains { Self.order(f, $0) == 0 } }
        case .beginsWith(let key, let prefix):
            return Self.any(record.queryValue(key)) { f in
                if case .string(let s) = f { return s.hasPrefix(prefix) }
                return false
            }
        case .contains(let key, let value):
            return Self.any(record.queryValue(key)) { Self.order($0, value) == 0 }
        case .tokens(let text):
            let wanted = Set(text.split(whereSeparator: { $0.isWhitespace }).map { Self.fold(String($0)) })
            var have = Set<String>()
            for (key, value) in record.searchedFields where searched?.contains(key) ?? true {
                for t in value.tokens { have.insert(Self.fold(t)) }
            }
            return wanted.isSubset(of: have)
        case .distance(let key, let location, let op, let radius):
            guard case .location(let here)? = record.queryValue(key) else { return false }
            let d = Self.metres(here, location)
            switch op {
            case .less: return d < radius
            case .lessOrEqual: return d <= radius
            case .greater: return d > radius
            case .greaterOrEqual: return d >= radius
            case .equal: return d == radius
            case .notEqual: return d != radius
            }
        }
    }

    /// A field's value, or a system field's: `recordID`, `creationDate`, `modificationDate`,
    /// `creatorUserRecordID`, `lastModifiedUserRecordID`, `parent`, `share` (references).
    static func field(_ key: String, of r: Record) -> FieldValue? {
        // Stored fields never take a system field's name (Names.checkFieldKey): look there first.
        if let v = r.fields[key] { return v }
        return switch key {
        case "recordID": .reference(Reference(recordName: r.recordID.recordName))
        case "creationDate": r.created.map { .timestamp(milliseconds: $0.timestamp) }
        case "modificationDate": r.modified.map { .timestamp(milliseconds: $0.timestamp) }
        case "creatorUserRecordID": r.created.map { .reference(Reference(recordName: $0.userRecordName)) }
        case "lastModifiedUserRecordID": r.modified.map { .reference(Reference(recordName: $0.userRecordName)) }
        case "parent": r.parent.map { .reference(Reference(recordName: $0)) }
        case "share": r.share.map { .reference(Reference(recordName: $0)) }
        default: nil
        }
    }

    static let systemKeys: Set<String> = ["recordID", "creationDate", "modificationDate", "creatorUserRecordID", "lastModifiedUserRecordID",
                                          "parent", "share"]

    /// System fields the zone index does not keep: a condition on one is tested on each record
    /// read, and no query sorts by one.
    static let unindexedSystemKeys: Set<String> = ["parent", "share"]

    /// Whether `test` holds for the value, or for an element of a list.
    private static func any(_ value: FieldValue?, _ test: (FieldValue) -> Bool) -> Bool {
        switch value {
        case nil: return false
        case .list(_, let items)?: return items.contains(where: test)
        case let v?: return test(v)
        }
    }

    /// -1, 0 or 1 as the field value is below, at or above the constant; nil when unlike.
    static func order(_ f: FieldValue, _ v: PredicateValue) -> Int? {
        func cmp<T: Comparable>(_ a: T, _ b: T) -> Int { a < b ? -1 : a > b ? 1 : 0 }
        switch (f, v) {
        case (.string(let a), .string(let b)): return a.canonicalOrder(b)
        case (.int64(let a), .int(let b)): return cmp(a, b)
        case (.int64(let a), .double(let b)): return cmp(Double(a), b)
        case (.double(let a), .double(let b)): return cmp(a, b)
        case (.double(let a), .int(let b)): return cmp(a, Double(b))
        case (.timestamp(let a), .date(let b)): return cmp(a, b)
        case (.reference(let a), .reference(let b)), (.reference(let a), .string(let b)): return cmp(a.recordName, b)
        default: return nil
        }
    }

    /// Two field values of one kind in sort order; values of unlike kinds by kind.
    static func order(_ a: FieldValue, _ b: FieldValue) -> Int {
        func cmp<T: Comparable>(_ x: T, _ y: T) -> Int { x < y ? -1 : x > y ? 1 : 0 }
        switch (a, b) {
        case (.string(let x), .string(let y)): return x.canonicalOrder(y)
        case (.int64(let x), .int64(let y)): return cmp(x, y)
        case (.double(let x), .double(let y)): return cmp(x, y)
        case (.int64(let x), .double(let y)): return cmp(Double(x), y)
        case (.double(let x), .int64(let y)): return cmp(x, Double(y))
        case (.timestamp(let x), .timestamp(let y)): return cmp(x, y)
        case (.reference(let x), .reference(let y)): return cmp(x.recordName, y.recordName)
        default: return cmp(a.type.kind.rawValue, b.type.kind.rawValue)
        }
    }

    /// A word as token search compares it: without case and diacritics.
    static func fold(_ s: String) -> String { s.folding(options: [.caseInsensitive, .diacriticInsensitive], locale: nil) }

    /// Great-circle distance in metres (haversine, mean Earth radius).
    static func metres(_ a: Location, _ b: Location) -> Double {
        let r = 6_371_008.8
        let (p1, p2) = (a.latitude * .pi / 180, b.latitude * .pi / 180)
        let dp = p2 - p1
        let dl = (b.longitude - a.longitude) * .pi / 180
        let h = sin(dp / 2) * sin(dp / 2) + cos(p1) * cos(p2) * sin(dl / 2) * sin(dl / 2)
        return 2 * r * asin(min(1, sqrt(h)))
    }

    /// Every key the predicate names, with what it asks of the key, for checks against the schema.
    var keyUses: [(key: String, use: KeyUse)] {
        switch self {
        case .all, .tokens: return []
        case .and(let parts): return parts.flatMap(\.keyUses)
        case .not(let inner): return inner.keyUses
        case .compare(let k, _, let v), .contains(let k, let v): return [(k, .compared(v))]
        case .between(let k, let low, let high): return [(k, .compared(.list([low, high])))]
        case .isIn(let k, let values): return [(k, .compared(.list(values)))]
        case .beginsWith(let k, _): return [(k, .prefix)]
        case .distance(let k, _, _, _): return [(k, .distance)]
        }
    }

    /// The schema index each key the predicate names needs (nil key: token search, which
    /// needs a searchable field of the type).
    var indexNeeds: [(key: String?, index: SchemaIndex)] {
        switch self {
        case .all: return []
        case .tokens: return [(nil, .searchable)]
        case .and(let parts): return parts.flatMap(\.indexNeeds)
        case .not(let inner): return inner.indexNeeds
        case .compare(let k, let op, _): return [(k, op == .equal || op == .notEqual ? .queryable : .sortable)]
        case .between(let k, _, _): return [(k, .sortable)]
        case .isIn(let k, _), .contains(let k, _), .beginsWith(let k, _), .distance(let k, _, _, _): return [(k, .queryable)]
        }
    }

    /// Whether the predicate searches words (`self CONTAINS`, `allTokens TOKENMATCHES`).
    var searchesWords: Bool { indexNeeds.contains { $0.key == nil } }

    enum KeyUse {
        case compared(PredicateValue)
        case prefix
        case distance
    }
}
