import Foundation

/// A predicate as CloudKit code writes it: `NSPredicate(format: "title BEGINSWITH %@", prefix)`.
///
/// Linux Foundation has an `NSPredicate` whose format strings are unavailable, so the
/// `CloudKit` module names this class `NSPredicate`; it parses CloudKit's predicate language
/// (the subset Apple's CloudKit accepts). Arguments are the values CloudKit code passes: strings, numbers, `Bool`,
/// `Date` or `NSDate`, `CKRecord.Reference`, `CKRecord.ID`, `CKRecord`, `Location`, and arrays
/// of these. A format that does not parse is reported when the query runs, as
/// `invalidArguments` naming the place, instead of Apple's exception.
///
/// `@unchecked Sendable`: immutable; every stored property is a `let`.
open class CloudKitPredicate: CustomStringConvertible, @unchecked Sendable {
    /// The predicate's text.
    public let predicateFormat: String
    private let parsed: Result<QueryPredicate, CKError>

    public convenience init(format predicateFormat: String, _ args: Any...) {
        self.init(format: predicateFormat, argumentArray: args)
    }

    public init(format predicateFormat: String, argumentArray arguments: [Any]?) {
        self.predicateFormat = predicateFormat
        do throws(CKError) {
            let values = try (arguments ?? []).enumerated().map { (i, argument) throws(CKError) in try Self.value(argument, at: i + 1) }
            parsed = .success(try QueryPredicate(format: predicateFormat, argumentArray: values))
        } catch {
            parsed = .failure(error)
        }
    }

    /// `NSPredicate(value: true)`, every record. CloudKit takes no other constant.
    public init(value: Bool) {
        predicateFormat = value ? "TRUEPREDICATE" : "FALSEPREDICATE"
        parsed = value ? .success(.all)
            : .failure(CKError(.invalidArguments, "CloudKit accepts only TRUEPREDICATE as a constant predicate, not FALSEPREDICATE"))
    }

    /// A predicate of ckfs's own form.
    public init(_ predicate: QueryPredicate) {
        predicateFormat = "\(predicate)"
        parsed = .success(predicate)
    }

    /// The predicate a query evaluates; `invalidArguments` saying what is wrong when the format
    /// or its arguments are not CloudKit's.
    public func queryPredicate() throws(CKError) -> QueryPredicate { try parsed.get() }

    public var description: String { predicateFormat }

    /// One `%@` (or `%d`, `%K`) argument as a predicate value.
    static func value(_ argument: Any, at position: Int) throws(CKError) -> PredicateValue {
        switch argument {
        case let v as String: return .string(v)
        case let v as Substring: return .string(String(v))
        case let v as Bool: return .int(v ? 1 : 0)
        case let v as Int: return .int(Int64(v))
        case let v as Int64: return .int(v)
        case let v as Int32: return .int(Int64(v))
        case let v as UInt: return .int(Int64(v))
        case let v as Double:
            guard v.isFinite else { throw CKError(.invalidArguments, "argument \(position) of the predicate is \(v); CloudKit compares finite numbers only") }
            return .double(v)
        case let v as Float: return .double(Double(v))
        case let v as Date: return .date(v)
        case let v as NSNumber: return Double(v.int64Value) == v.doubleValue ? .int(v.int64Value) : .double(v.doubleValue)
        case let v as CKRecord.Reference: return .reference(v.recordID.recordName)
        case let v as CKRecord.ID: return .reference(v.recordName)
        case let v as CKRecord: return .reference(v.recordID.recordName)
        case let v as Location: return .location(v)
        case let v as [Any]:
            return .list(try v.map { (element) throws(CKError) in try value(element, at: position) })
        default:
            throw CKError(.invalidArguments, "argument \(position) of the predicate is a \(type(of: argument)); CloudKit takes strings, numbers, dates, references, record IDs, locations and arrays of these")
        }
    }
}

/// An AND, OR or NOT of predicates, as CloudKit code builds them (`NSCompoundPredicate` in the
/// `CloudKit` module). CloudKit answers AND and NOT;
/// an OR is refused when the query runs, as Apple's server refuses it.
open class CloudKitCompoundPredicate: CloudKitPredicate, @unchecked Sendable {
    public enum LogicalType: UInt, Sendable {
        case not = 0
        case and = 1
        case or = 2
    }

    public let compoundPredicateType: LogicalType
    public let subpredicates: [Any]

    public init(type: LogicalType, subpredicates: [CloudKitPredicate]) {
        compoundPredicateType = type
        self.subpredicates = subpredicates
        combined = Self.combine(type, subpredicates)
        let joined = subpredicates.map { "(\($0.predicateFormat))" }
        let format = switch type {
        case .and: joined.joined(separator: " AND ")
        case .or: joined.joined(separator: " OR ")
        case .not: "NOT " + (joined.first ?? "TRUEPREDICATE")
        }
        super.init(format: format, argumentArray: nil)
    }

    public convenience init(andPredicateWithSubpredicates subpredicates: [CloudKitPredicate]) { self.init(type: .and, subpredicates: subpredicates) }
    public convenience init(orPredicateWithSubpredicates subpredicates: [CloudKitPredicate]) { self.init(type: .or, subpredicates: subpredicates) }
    public convenience init(notPredicateWithSubpredicate predicate: CloudKitPredicate) { self.init(type: .not, subpredicates: [predicate]) }

    private let combined: Result<QueryPredicate, CKError>

    public override func queryPredicate() throws(CKError) -> QueryPredicate { try combined.get() }

    private static func combine(_ type: LogicalType, _ parts: [CloudKitPredicate]) -> Result<QueryPredicate, CKError> {
        do throws(CKError) {
            let predicates = try parts.map { (p) throws(CKError) in try p.queryPredicate() }
            switch type {
            case .and: return .success(predicates.isEmpty ? .all : predicates.count == 1 ? predicates[0] : .and(predicates))
            case .not:
                guard predicates.count == 1 else { throw CKError(.invalidArguments, "a NOT predicate takes one subpredicate, not \(predicates.count)") }
                return .success(.not(predicates[0]))
            case .or: throw CKError(.invalidArguments, "CloudKit queries do not take OR; run one query for each side and merge the results")
            }
        } catch {
            return .failure(error)
        }
    }
}

/// A sort key as CloudKit code writes it: `NSSortDescriptor(key: "created", ascending: false)`.
/// Linux Foundation's key-based initializer is unavailable, so the `CloudKit` module names
/// this class `NSSortDescriptor`.
///
/// `@unchecked Sendable`: immutable; every stored property is a `let`.
open class CloudKitSortDescriptor: @unchecked Sendable, CustomStringConvertible {
    public let key: String?
    public let ascending: Bool

    public init(key: String?, ascending: Bool) {
        self.key = key
        self.ascending = ascending
    }

    /// The same key the other way round.
    open var reversedSortDescriptor: Any { CloudKitSortDescriptor(key: key, ascending: !ascending) }

    public var description: String { "(\(key ?? "nil"), \(ascending ? "ascending" : "descending"))" }

    /// The engine's form; a descriptor without a key is refused.
    func querySortDescriptor() throws(CKError) -> QuerySortDescriptor {
        guard let key else { throw CKError(.invalidArguments, "a sort descriptor of a CloudKit query needs a key") }
        return QuerySortDescriptor(key: key, ascending: ascending)
    }
}

/// Sorts a location field by distance from a point, nearest first when ascending.
open class CKLocationSortDescriptor: CloudKitSortDescriptor, @unchecked Sendable {
    public let relativeLocation: Location

    public init(key: String, relativeLocation: Location) {
        self.relativeLocation = relativeLocation
        super.init(key: key, ascending: true)
    }

    override func querySortDescriptor() throws(CKError) -> QuerySortDescriptor {
        QuerySortDescriptor(key: key ?? "", relativeLocation: relativeLocation, ascending: ascending)
    }
}
