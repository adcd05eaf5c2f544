import Foundation

/// One key to sort query results by: a field's value, or, with `relativeLocation`, a location
/// field's distance from a point (`CKLocationSortDescriptor`; records without the field last).
public struct QuerySortDescriptor: Sendable, Hashable {
    public var key: String
    public var ascending: Bool
    public var relativeLocation: Location?

    public init(key: String, ascending: Bool = true) {
        self.key = key
        self.ascending = ascending
    }

    /// Nearest first (ascending) or farthest first, by great-circle distance from `location`.
    public init(key: String, relativeLocation location: Location, ascending: Bool = true) {
        self.init(key: key, ascending: ascending)
        relativeLocation = location
    }
}

/// A query: the records of one type that match a predicate, in an order.
public struct RecordQuery: Sendable, Equatable {
    public var recordType: String
    public var predicate: QueryPredicate
    public var sortDescriptors: [QuerySortDescriptor]
    /// The fields a word search reads: the type's strings marked searchable, set from the
    /// schema when the query runs (``Database/searchableFields(of:)``); nil reads every field.
    var searchableFields: Set<String>?

    public init(recordType: String, predicate: QueryPredicate = .all, sortDescriptors: [QuerySortDescriptor] = []) {
        self.recordType = recordType
        self.predicate = predicate
        self.sortDescriptors = sortDescriptors
    }

    /// Whether `record` is one of the query's results.
    func matches<Source: QueryFieldSource>(_ record: Source) -> Bool {
        predicate.evaluate(record, searching: searchableFields)
    }
}

/// Where a query stopped: pass it back to get the records after it. It holds the last
/// record's sort values and name, so records saved or deleted meanwhile neither repeat nor
/// shift a page. Opaque text, safe to print and pass on a command line.
public struct QueryCursor: Sendable, Equatable, CustomStringConvertible {
    public let text: String
    public init(text: String) { self.text = text }
    public var description: String { text }
}

/// One page of a query's results.
public struct QueryResult: Sendable {
    public var records: [Record]
    /// Set when more records match.
    public var cursor: QueryCursor?
}

extension QuerySortDescriptor {
    /// What the descriptor sorts `record` by: the field's value, or its distance in metres from
    /// `relativeLocation` (nil when the record has no such location).
    func value(of record: Record) -> FieldValue? {
        let field = QueryPredicate.field(key, of: record)
        guard let relativeLocation else { return field }
        guard case .location(let here)? = field else { return nil }
        return .double(QueryPredicate.metres(here, relativeLocation))
    }
}

extension RecordQuery {
    static func after(_ value: PredicateValue, _ field: FieldValue?) -> Bool {
        guard let field, let order = QueryPredicate.order(field, value) else { return true }
        return order > 0
    }

    /// Sort order: by each sort key (values missing last), then by record name.
    static func compare(_ av: [FieldValue?], _ an: String, _ bv: [FieldValue?], _ bn: String, _ sort: [QuerySortDescriptor]) -> Int {
        for (i, d) in sort.enumerated() {
            let order: Int
            switch (av[i], bv[i]) {
            case (nil, nil): order = 0
            case (nil, _): order = 1
            case (_, nil): order = -1
            case (let x?, let y?): order = d.ascending ? QueryPredicate.order(x, y) : -QueryPredicate.order(x, y)
            }
            if order != 0 { return order }
        }
        return an < bn ? -1 : an > bn ? 1 : 0
    }
}
