import Foundation

/// NSPredicate text as CloudKit accepts it, parsed, for code that uses the engine's types:
/// `try QueryPredicate(format: "title BEGINSWITH %@", .string("Sea"))`. CloudKit code writes
/// `NSPredicate(format:…)` instead, which the CloudKit module parses here.
extension QueryPredicate {
    public init(format: String, _ arguments: PredicateValue...) throws(CKError) {
        try self.init(format: format, argumentArray: arguments)
    }

    public init(format: String, argumentArray: [PredicateValue]) throws(CKError) {
        do { self = try PredicateParser.parse(format, arguments: argumentArray) } catch {
            throw CKError(.invalidArguments, "predicate \"\(format)\" \(error)")
        }
    }

    /// `NSPredicate(value: true)`: every record.
    public init(value: Bool) throws(CKError) {
        guard value else { throw CKError(.invalidArguments, "CloudKit accepts only TRUEPREDICATE as a constant predicate") }
        self = .all
    }
}
