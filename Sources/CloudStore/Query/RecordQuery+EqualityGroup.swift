extension RecordQuery {
    /// A `key == value` condition the whole predicate requires, on a field that holds one
    /// sortable value (not a list: `==` on a list matches any element).
    static func equalityGroup(_ predicate: QueryPredicate, _ types: [String: FieldType]) -> (key: String, value: PredicateValue)? {
        let conditions: [QueryPredicate]
        switch predicate {
        case .and(let parts): conditions = parts
        default: conditions = [predicate]
        }
        for case .compare(let key, .equal, let value) in conditions {
            guard let t = types[key], !t.isList, [.string, .int64, .double, .timestamp, .reference].contains(t.kind) else { continue }
            switch (t.kind, value) {
            // A list matches any element; an integer field equal to a double (or the other way)
            // is a run of several values past 2^53, which the run's order would not keep.
            case (_, .list), (.int64, .double), (.double, .int): continue
            default: return (key, value)
            }
        }
        return nil
    }

    /// Whether a record's value of the group key sorts before the group's value (a record
    /// without the key sorts last).
    static func before(_ value: PredicateValue, _ field: FieldValue?) -> Bool {
        guard let field, let order = QueryPredicate.order(field, value) else { return false }
        return order < 0
    }
}
