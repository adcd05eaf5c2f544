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
/// As Apple's, it is an `NSObject` with `NSSecureCoding` and `NSCopying`, and two predicates
/// are equal when their text with the arguments in place is.
///
/// `@unchecked Sendable`: immutable; every stored property is a `let`.
open class CloudKitPredicate: NSObject, NSSecureCoding, NSCopying, @unchecked Sendable {
    /// The predicate's text with its arguments in place (`title BEGINSWITH "Sea"`), as Apple's
    /// gives it; a format that does not parse keeps the caller's text.
    public let predicateFormat: String
    private let parsed: Result<QueryPredicate, CKError>

    public convenience init(format predicateFormat: String, _ args: Any...) {
        self.init(format: predicateFormat, argumentArray: args)
    }

    public init(format predicateFormat: String, argumentArray arguments: [Any]?) {
        do throws(CKError) {
            let values = try (arguments ?? []).enumerated().map { (i, argument) throws(CKError) in try Self.value(argument, at: i + 1) }
            let predicate = try QueryPredicate(format: predicateFormat, argumentArray: values)
            parsed = .success(predicate)
            self.predicateFormat = predicate.description
        } catch {
            parsed = .failure(error)
            self.predicateFormat = predicateFormat
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

    open override var description: String { predicateFormat }

    open override func isEqual(_ object: Any?) -> Bool {
        guard let other = object as? CloudKitPredicate, type(of: other) == type(of: self) else { return false }
        return other.predicateFormat == predicateFormat
    }

    open override var hash: Int { predicateFormat.hashValue }

    /// Immutable: the copy is the predicate itself.
    open func copy(with zone: NSZone? = nil) -> Any { self }

    public class var supportsSecureCoding: Bool { true }

    /// The text, and why it was refused when it was: a predicate read back is refused again,
    /// with the same reason, when a query runs with it.
    open func encode(with coder: NSCoder) {
        coder.encode(predicateFormat as NSString, forKey: "predicateFormat")
        if case .failure(let error) = parsed { coder.encode(error.message as NSString, forKey: "refusal") }
    }

    public required init?(coder: NSCoder) {
        guard let format = coder.decodeObject(of: NSString.self, forKey: "predicateFormat") as String? else { return nil }
        predicateFormat = format
        if let refusal = coder.decodeStringIfPresent(forKey: "refusal") {
            parsed = .failure(CKError(.invalidArguments, refusal))
        } else {
            do {
                parsed = .success(try PredicateParser.parse(format))
            } catch {
                parsed = .failure(CKError(.invalidArguments, "the archived predicate \"\(format)\" \(error)"))
            }
        }
    }

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
        case let v as CLLocation: return .location(v.location)
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

    open override func encode(with coder: NSCoder) {
        super.encode(with: coder)
        coder.encode(Int(compoundPredicateType.rawValue), forKey: "compoundPredicateType")
        coder.encode(NSArray(array: subpredicates), forKey: "subpredicates")
    }

    public required init?(coder: NSCoder) {
        guard let type = LogicalType(rawValue: UInt(coder.decodeInteger(forKey: "compoundPredicateType"))),
              let parts = coder.decodeObject(of: [NSArray.self, CloudKitPredicate.self], forKey: "subpredicates") as? [CloudKitPredicate]
        else { return nil }
        compoundPredicateType = type
        subpredicates = parts
        combined = Self.combine(type, parts)
        super.init(coder: coder)
    }

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
/// this class `NSSortDescriptor`. As Apple's, it is an `NSObject` with `NSSecureCoding` and
/// `NSCopying`, equal to another of the same key and direction.
///
/// `@unchecked Sendable`: immutable; every stored property is a `let`.
open class CloudKitSortDescriptor: NSObject, NSSecureCoding, NSCopying, @unchecked Sendable {
    public let key: String?
    public let ascending: Bool

    public init(key: String?, ascending: Bool) {
        self.key = key
        self.ascending = ascending
    }

    /// The same key the other way round.
    open var reversedSortDescriptor: Any { CloudKitSortDescriptor(key: key, ascending: !ascending) }

    open override var description: String { "(\(key ?? "nil"), \(ascending ? "ascending" : "descending"))" }

    open override func isEqual(_ object: Any?) -> Bool {
        guard let other = object as? CloudKitSortDescriptor, type(of: other) == type(of: self) else { return false }
        return other.key == key && other.ascending == ascending
    }

    open override var hash: Int { key.hashValue ^ (ascending ? 1 : 0) }

    /// Immutable: the copy is the descriptor itself.
    open func copy(with zone: NSZone? = nil) -> Any { self }

    public class var supportsSecureCoding: Bool { true }

    open func encode(with coder: NSCoder) {
        if let key { coder.encode(key as NSString, forKey: "key") }
        coder.encode(ascending, forKey: "ascending")
    }

    public required init?(coder: NSCoder) {
        key = coder.decodeStringIfPresent(forKey: "key")
        ascending = coder.decodeBool(forKey: "ascending")
    }

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

    /// Apple's form: the point as CoreLocation's `CLLocation`.
    public convenience init(key: String, relativeLocation: CLLocation) {
        self.init(key: key, relativeLocation: relativeLocation.location)
    }

    open override func isEqual(_ object: Any?) -> Bool {
        guard super.isEqual(object), let other = object as? CKLocationSortDescriptor else { return false }
        return other.relativeLocation.latitude == relativeLocation.latitude && other.relativeLocation.longitude == relativeLocation.longitude
    }

    /// The point's latitude and longitude: what the distance is measured from.
    open override func encode(with coder: NSCoder) {
        super.encode(with: coder)
        coder.encode(relativeLocation.latitude, forKey: "latitude")
        coder.encode(relativeLocation.longitude, forKey: "longitude")
    }

    public required init?(coder: NSCoder) {
        relativeLocation = Location(latitude: coder.decodeDouble(forKey: "latitude"), longitude: coder.decodeDouble(forKey: "longitude"))
        super.init(coder: coder)
    }

    override func querySortDescriptor() throws(CKError) -> QuerySortDescriptor {
        QuerySortDescriptor(key: key ?? "", relativeLocation: relativeLocation, ascending: ascending)
    }
}
