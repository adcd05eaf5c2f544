import Foundation
import CloudStore

/// A predicate as CloudKit code writes it: `NSPredicate(format: "title BEGINSWITH %@", prefix)`.
///
/// Linux Foundation's `NSPredicate` has no format strings, so `NSPredicate(format:…)` (a factory
/// initializer, ``CloudKitPredicateFactory``) makes one of these: Foundation's `NSPredicate`, in a
/// subclass that parses CloudKit's predicate language (the subset Apple's CloudKit accepts).
/// Code that imports Foundation and CloudKit names one type, Foundation's. Arguments are the
/// values CloudKit code passes: strings, numbers, `Bool`, `Date` or `NSDate`,
/// `CKRecord.Reference`, `CKRecord.ID`, `CKRecord`, `CLLocation` or `Location`, and arrays of
/// these. A format that does not parse is reported when the query runs, as `invalidArguments`
/// naming the place, instead of Apple's exception.
///
/// As Apple's, it has `NSSecureCoding` and `NSCopying`, and two predicates are equal when their
/// text with the arguments in place is. Not `Sendable`: Foundation's `NSPredicate` is not.
open class CloudKitPredicate: NSPredicate, NSSecureCoding {
    /// The predicate's text with its arguments in place (`title BEGINSWITH "Sea"`), as Apple's
    /// gives it; a format that does not parse keeps the caller's text.
    public let format: String
    private let parsed: Result<QueryPredicate, CKError>

    open override var predicateFormat: String { format }

    public convenience init(format predicateFormat: String, _ args: Any...) {
        self.init(format: predicateFormat, argumentArray: args)
    }

    public init(format predicateFormat: String, argumentArray arguments: [Any]?) {
        do throws(CKError) {
            let values = try (arguments ?? []).enumerated().map { (i, argument) throws(CKError) in try Self.value(argument, at: i + 1) }
            let predicate = try QueryPredicate(format: predicateFormat, argumentArray: values)
            parsed = .success(predicate)
            format = predicate.description
        } catch {
            parsed = .failure(error)
            format = predicateFormat
        }
        super.init(value: true)
    }

    /// `TRUEPREDICATE`, every record. CloudKit takes no other constant.
    public override init(value: Bool) {
        format = value ? "TRUEPREDICATE" : "FALSEPREDICATE"
        parsed = value ? .success(.all) : .failure(Self.falseRefused)
        super.init(value: value)
    }

    static let falseRefused = CKError(.invalidArguments, "CloudKit accepts only TRUEPREDICATE as a constant predicate, not FALSEPREDICATE")

    /// A predicate of ckfs's own form.
    public init(_ predicate: QueryPredicate) {
        format = "\(predicate)"
        parsed = .success(predicate)
        super.init(value: true)
    }


    /// The predicate a query evaluates; `invalidArguments` saying what is wrong when the format
    /// or its arguments are not CloudKit's.
    public func queryPredicate() throws(CKError) -> QueryPredicate { try parsed.get() }

    /// Whether `object`, a `CKRecord`, matches, as Apple's `evaluate(with:)` tells of a record.
    open override func evaluate(with object: Any?) -> Bool {
        guard let record = object as? CKRecord, let predicate = try? parsed.get() else { return false }
        return predicate.matches(record.record)
    }

    open override var description: String { format }

    open override func isEqual(_ object: Any?) -> Bool {
        guard let other = object as? CloudKitPredicate, type(of: other) == type(of: self) else { return false }
        return other.format == format
    }

    open override var hash: Int { format.hashValue }

    /// Immutable: the copy is the predicate itself.
    open override func copy(with zone: NSZone? = nil) -> Any { self }

    public class var supportsSecureCoding: Bool { true }

    /// The text, and why it was refused when it was: a predicate read back is refused again,
    /// with the same reason, when a query runs with it.
    open func encode(with coder: NSCoder) {
        coder.encode(format as NSString, forKey: "predicateFormat")
        if case .failure(let error) = parsed { coder.encode(error.message as NSString, forKey: "refusal") }
    }

    public required init?(coder: NSCoder) {
        guard let format = coder.decodeObject(of: NSString.self, forKey: "predicateFormat") as String? else { return nil }
        self.format = format
        if let refusal = coder.decodeStringIfPresent(forKey: "refusal") {
            parsed = .failure(CKError(.invalidArguments, refusal))
        } else {
            do {
                parsed = .success(try PredicateParser.parse(format))
            } catch {
                parsed = .failure(CKError(.invalidArguments, "the archived predicate \"\(format)\" \(error)"))
            }
        }
        super.init(value: true)
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

/// An AND, OR or NOT of predicates in the form ckfs archives: Foundation's `NSCompoundPredicate`
/// (which CloudKit code builds, `NSCompoundPredicate(andPredicateWithSubpredicates:)`) as a
/// `CKQuery` or a subscription keeps it. CloudKit answers AND and NOT; an OR is refused when the
/// query runs, as Apple's server refuses it.
open class CloudKitCompoundPredicate: NSCompoundPredicate, NSSecureCoding {
    public override init(type: NSCompoundPredicate.LogicalType, subpredicates: [NSPredicate]) {
        super.init(type: type, subpredicates: subpredicates)
    }

    open override var predicateFormat: String { description }

    open override var description: String {
        let joined = subpredicates.map { "(\($0.cloudKitText))" }
        return switch compoundPredicateType {
        case .and: joined.isEmpty ? "TRUEPREDICATE" : joined.joined(separator: " AND ")
        case .or: joined.joined(separator: " OR ")
        case .not: "NOT " + (joined.first ?? "TRUEPREDICATE")
        @unknown default: joined.joined(separator: " ? ")
        }
    }

    /// Equal to any compound predicate of the same kind and equal parts, Foundation's too.
    open override func isEqual(_ object: Any?) -> Bool {
        guard let other = object as? NSCompoundPredicate, other.compoundPredicateType == compoundPredicateType,
              other.subpredicates.count == subpredicates.count else { return false }
        return zip(subpredicates, other.subpredicates).allSatisfy { $0.isEqual($1) || $1.isEqual($0) }
    }

    open override var hash: Int { Int(compoundPredicateType.rawValue) &* 31 &+ subpredicates.count }

    /// Immutable: the copy is the predicate itself.
    open override func copy(with zone: NSZone? = nil) -> Any { self }

    public class var supportsSecureCoding: Bool { true }

    open func encode(with coder: NSCoder) {
        coder.encode(Int(compoundPredicateType.rawValue), forKey: "compoundPredicateType")
        coder.encode(NSArray(array: subpredicates.map(\.archivable)), forKey: "subpredicates")
    }

    public required init?(coder: NSCoder) {
        guard let type = NSCompoundPredicate.LogicalType(rawValue: UInt(coder.decodeInteger(forKey: "compoundPredicateType"))),
              let parts = coder.decodeObject(of: [NSArray.self, CloudKitPredicate.self, CloudKitCompoundPredicate.self], forKey: "subpredicates") as? [NSPredicate]
        else { return nil }
        super.init(type: type, subpredicates: parts)
    }
}

/// Makes `NSPredicate(format:…)` give ckfs's ``CloudKitPredicate``, as a factory: Foundation's
/// `NSPredicate` has no format strings on Linux, and a second type of that name would make
/// every type annotation of a file that imports Foundation too ambiguous.
public protocol CloudKitPredicateFactory {}

extension NSPredicate: CloudKitPredicateFactory {}

extension CloudKitPredicateFactory where Self == NSPredicate {
    public init(format predicateFormat: String, _ args: Any...) {
        self = CloudKitPredicate(format: predicateFormat, argumentArray: args)
    }

    public init(format predicateFormat: String, argumentArray arguments: [Any]?) {
        self = CloudKitPredicate(format: predicateFormat, argumentArray: arguments)
    }
}

extension NSPredicate {
    /// The predicate a CloudKit query evaluates: ckfs's own, the compound of Foundation's
    /// `NSCompoundPredicate` (AND and NOT; an OR is refused, as Apple's server refuses it), and
    /// Foundation's `NSPredicate(value: true)`; `invalidArguments` saying what is wrong otherwise.
    func cloudKitQueryPredicate() throws(CKError) -> QueryPredicate {
        if let ours = self as? CloudKitPredicate { return try ours.queryPredicate() }
        if let compound = self as? NSCompoundPredicate {
            var parts: [QueryPredicate] = []
            for part in compound.subpredicates { parts.append(try part.cloudKitQueryPredicate()) }
            switch compound.compoundPredicateType {
            case .and: return parts.isEmpty ? .all : parts.count == 1 ? parts[0] : .and(parts)
            case .not:
                guard parts.count == 1 else { throw CKError(.invalidArguments, "a NOT predicate takes one subpredicate, not \(parts.count)") }
                return .not(parts[0])
            default: throw CKError(.invalidArguments, "CloudKit queries do not take OR; run one query for each side and merge the results")
            }
        }
        // Foundation's `NSPredicate(value:)`: a constant, the same for any object.
        guard evaluate(with: nil) else { throw CloudKitPredicate.falseRefused }
        return .all
    }

    /// The text a CloudKit predicate shows: ckfs's own, or Foundation's constant's
    /// (`NSPredicate(value:)`, the one other predicate Linux Foundation makes).
    var cloudKitText: String {
        (self as? CloudKitPredicate)?.format ?? (self as? CloudKitCompoundPredicate)?.description
            ?? (evaluate(with: nil) ? "TRUEPREDICATE" : "FALSEPREDICATE")
    }

    /// This predicate in a form `NSKeyedArchiver` takes (Linux Foundation's own predicates have
    /// no secure coding): ckfs's classes, the same predicate.
    var archivable: NSPredicate {
        if self is CloudKitPredicate || self is CloudKitCompoundPredicate { return self }
        if let compound = self as? NSCompoundPredicate {
            return CloudKitCompoundPredicate(type: compound.compoundPredicateType,
                                             subpredicates: compound.subpredicates.map(\.archivable))
        }
        return CloudKitPredicate(value: evaluate(with: nil))
    }
}

/// A sort key as CloudKit code writes it: `NSSortDescriptor(key: "created", ascending: false)`,
/// a factory initializer (``CloudKitSortDescriptorFactory``) that makes one of these: Foundation's
/// `NSSortDescriptor`, whose key-based initializer and `key` are unavailable on Linux, in a
/// subclass that keeps its key (`sortKey`). Equal to another of the same key and direction.
open class CloudKitSortDescriptor: NSSortDescriptor, NSSecureCoding {
    public let sortKey: String?
    /// What Foundation's key path reads: the key. Not used to sort.
    private var keyText: String { sortKey ?? "" }

    public init(key: String?, ascending: Bool) {
        sortKey = key
        super.init(keyPath: \CloudKitSortDescriptor.keyText, ascending: ascending)
    }

    /// The same key the other way round.
    open override var reversedSortDescriptor: Any { CloudKitSortDescriptor(key: sortKey, ascending: !ascending) }

    open override var description: String { "(\(sortKey ?? "nil"), \(ascending ? "ascending" : "descending"))" }

    open override func isEqual(_ object: Any?) -> Bool {
        guard let other = object as? CloudKitSortDescriptor, type(of: other) == type(of: self) else { return false }
        return other.sortKey == sortKey && other.ascending == ascending
    }

    open override var hash: Int { sortKey.hashValue ^ (ascending ? 1 : 0) }

    /// Immutable: the copy is the descriptor itself.
    open override func copy(with zone: NSZone? = nil) -> Any { self }

    public class var supportsSecureCoding: Bool { true }

    open func encode(with coder: NSCoder) {
        if let sortKey { coder.encode(sortKey as NSString, forKey: "key") }
        coder.encode(ascending, forKey: "ascending")
    }

    public required init?(coder: NSCoder) {
        sortKey = coder.decodeStringIfPresent(forKey: "key")
        super.init(keyPath: \CloudKitSortDescriptor.keyText, ascending: coder.decodeBool(forKey: "ascending"))
    }

    /// The engine's form; a descriptor without a key is refused.
    func querySortDescriptor() throws(CKError) -> QuerySortDescriptor {
        guard let sortKey else { throw CKError(.invalidArguments, "a sort descriptor of a CloudKit query needs a key") }
        return QuerySortDescriptor(key: sortKey, ascending: ascending)
    }
}

/// Makes `NSSortDescriptor(key:ascending:)` give ckfs's ``CloudKitSortDescriptor``, as a
/// factory: Foundation's is unavailable on Linux.
public protocol CloudKitSortDescriptorFactory {}

extension NSSortDescriptor: CloudKitSortDescriptorFactory {}

extension CloudKitSortDescriptorFactory where Self == NSSortDescriptor {
    public init(key: String?, ascending: Bool) {
        self = CloudKitSortDescriptor(key: key, ascending: ascending)
    }
}

extension NSSortDescriptor {
    /// The engine's sort of a CloudKit query: ckfs's descriptors; one built from a key path has
    /// no key CloudKit can sort by.
    func cloudKitSortDescriptor() throws(CKError) -> QuerySortDescriptor {
        guard let ours = self as? CloudKitSortDescriptor else {
            throw CKError(.invalidArguments, "a CloudKit query sorts by a field's name: use NSSortDescriptor(key:ascending:), not a key path")
        }
        return try ours.querySortDescriptor()
    }
}

/// Sorts a location field by distance from a point, nearest first when ascending.
open class CKLocationSortDescriptor: CloudKitSortDescriptor {
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
        QuerySortDescriptor(key: sortKey ?? "", relativeLocation: relativeLocation, ascending: ascending)
    }
}
