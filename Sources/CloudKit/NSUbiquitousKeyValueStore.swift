import Foundation
import CloudStore
import Logging

/// Code written for Apple's class compiles against ckfs unchanged (Foundation on Linux has none):
/// the engine's key-value store, with Apple's API below.
public typealias NSUbiquitousKeyValueStore = KeyValueStore

/// `userInfo` key of `didChangeExternallyNotification`: the reason, an `Int`.
public let NSUbiquitousKeyValueStoreChangeReasonKey = KeyValueStore.changeReasonKey
/// `userInfo` key of `didChangeExternallyNotification`: the changed keys, `[String]`.
public let NSUbiquitousKeyValueStoreChangedKeysKey = KeyValueStore.changedKeysKey
public let NSUbiquitousKeyValueStoreDidChangeExternallyNotification = KeyValueStore.didChangeExternallyNotification
public let NSUbiquitousKeyValueStoreServerChange = KeyValueChangeReason.serverChange.rawValue
public let NSUbiquitousKeyValueStoreInitialSyncChange = KeyValueChangeReason.initialSyncChange.rawValue
public let NSUbiquitousKeyValueStoreQuotaViolationChange = KeyValueChangeReason.quotaViolationChange.rawValue
public let NSUbiquitousKeyValueStoreAccountChange = KeyValueChangeReason.accountChange.rawValue

/// The API of `NSUbiquitousKeyValueStore`: untyped values, getters that answer nil, 0 or
/// false for a missing key or a value of another type, setters that never throw (a refused
/// write is logged to standard error and kept in ``KeyValueStore/lastError``, as Apple's
/// logs and ignores it).
///
/// Numbers behave as `NSNumber` does: ``double(forKey:)`` reads an integer,
/// ``longLong(forKey:)`` a real (cut toward zero), and both read a bool as 0 or 1;
/// ``bool(forKey:)`` is true for a nonzero number.
extension KeyValueStore {
    // MARK: Getters

    public func object(forKey key: String) -> Any? { value(forKey: key).map(Self.foundationObject) }

    public func string(forKey key: String) -> String? {
        if case .string(let s)? = value(forKey: key) { return s }
        return nil
    }

    public func array(forKey key: String) -> [Any]? {
        if case .array(let a)? = value(forKey: key) { return a.map(Self.foundationObject) }
        return nil
    }

    public func dictionary(forKey key: String) -> [String: Any]? {
        if case .dictionary(let d)? = value(forKey: key) { return d.mapValues(Self.foundationObject) }
        return nil
    }

    public func data(forKey key: String) -> Data? {
        if case .data(let d)? = value(forKey: key) { return Data(d) }
        return nil
    }

    public func longLong(forKey key: String) -> Int64 {
        switch value(forKey: key) {
        case .integer(let i)?: return i
        case .real(let d)?: return d.isFinite ? Int64(exactly: d.rounded(.towardZero)) ?? (d < 0 ? .min : .max) : 0
        case .bool(let b)?: return b ? 1 : 0
        default: return 0
        }
    }

    public func double(forKey key: String) -> Double {
        switch value(forKey: key) {
        case .real(let d)?: return d
        case .integer(let i)?: return Double(i)
        case .bool(let b)?: return b ? 1 : 0
        default: return 0
        }
    }

    public func bool(forKey key: String) -> Bool {
        switch value(forKey: key) {
        case .bool(let b)?: return b
        case .integer(let i)?: return i != 0
        case .real(let d)?: return d != 0 && !d.isNaN
        default: return false
        }
    }

    /// Every key and value, as Foundation objects.
    public var dictionaryRepresentation: [String: Any] { entries.mapValues(Self.foundationObject) }

    // MARK: Setters

    /// Sets a property-list object (`String`, `Bool`, an integer or floating-point number,
    /// `NSNumber`, `Date`, `Data`, arrays and `[String: Any]` dictionaries of those); nil
    /// removes the key. Anything else is refused with a message naming its type.
    public func set(_ object: Any?, forKey key: String) {
        guard let object else { return removeObject(forKey: key) }
        do {
            try setValue(try PropertyListValue(foundationObject: object), forKey: key)
        } catch {
            noteFailure(error)
            Self.log("cannot set \"\(key.prefix(80))\": \(error)")
        }
    }

    public func set(_ value: String?, forKey key: String) { set(value as Any?, forKey: key) }
    public func set(_ value: Data?, forKey key: String) { set(value as Any?, forKey: key) }
    public func set(_ value: [Any]?, forKey key: String) { set(value as Any?, forKey: key) }
    public func set(_ value: [String: Any]?, forKey key: String) { set(value as Any?, forKey: key) }
    public func set(_ value: Int64, forKey key: String) { set(value as Any, forKey: key) }
    public func set(_ value: Double, forKey key: String) { set(value as Any, forKey: key) }
    public func set(_ value: Bool, forKey key: String) { set(value as Any, forKey: key) }

    public func removeObject(forKey key: String) {
        do { try removeValue(forKey: key) } catch { Self.log("cannot remove \"\(key.prefix(80))\": \(error)") }
    }

    /// Writes pending changes and takes in others'; false (with ``lastError``) when the store
    /// cannot be read or written.
    @discardableResult
    public func synchronize() -> Bool {
        do { try sync(); return true } catch {
            Self.log("cannot synchronize: \(error)")
            return false
        }
    }

    // MARK: Conversion

    static func foundationObject(_ value: PropertyListValue) -> Any {
        switch value {
        case .string(let s): s
        case .integer(let i): Int(i)
        case .real(let d): d
        case .bool(let b): b
        case .date(let d): d
        case .data(let d): Data(d)
        case .array(let a): a.map(foundationObject)
        case .dictionary(let d): d.mapValues(foundationObject)
        }
    }

    /// Problems the Foundation-style API cannot throw (its setters return nothing), as Apple's
    /// logs them; swift-log writes to standard error unless the program sets it up otherwise.
    static func log(_ message: String) {
        logger.warning("\(message)")
    }

    private static let logger = Logger(label: "ckfs.keyvalue")
}

extension PropertyListValue {
    /// The value of a Foundation property-list object; fails naming the type of anything else.
    public init(foundationObject object: Any) throws(CKError) {
        if let v = object as? PropertyListValue { self = v; return }
        let type = type(of: object)
        if type == Bool.self, let b = object as? Bool { self = .bool(b); return }
        if let s = object as? String { self = .string(s); return }
        if let i = object as? any BinaryInteger {
            guard let v = Int64(exactly: i) else { throw CKError(.invalidArguments, "the integer \(i) does not fit in 64 signed bits, as property lists keep integers") }
            self = .integer(v)
            return
        }
        if let d = object as? Double, type == Double.self { self = .real(d); return }
        if let f = object as? Float, type == Float.self { self = .real(Double(f)); return }
        if let n = object as? NSNumber {
            let kind = String(cString: n.objCType)
            if String(describing: Swift.type(of: n)).contains("Boolean") { self = .bool(n.boolValue) }
            else if kind == "f" || kind == "d" { self = .real(n.doubleValue) }
            else if kind == "Q" || kind == "L" { guard let v = Int64(exactly: n.uint64Value) else { throw CKError(.invalidArguments, "the integer \(n) does not fit in 64 signed bits") }; self = .integer(v) }
            else { self = .integer(n.int64Value) }
            return
        }
        if let d = object as? Date { self = .date(d); return }
        if let d = object as? Data { self = .data(Array(d)); return }
        if let a = object as? [Any] {
            var items: [PropertyListValue] = []
            for element in a { items.append(try PropertyListValue(foundationObject: element)) }
            self = .array(items)
            return
        }
        if let d = object as? [String: Any] {
            var members: [String: PropertyListValue] = [:]
            for (k, v) in d { members[k] = try PropertyListValue(foundationObject: v) }
            self = .dictionary(members)
            return
        }
        if let d = object as? [AnyHashable: Any] {
            var members: [String: PropertyListValue] = [:]
            for (k, v) in d {
                guard let key = k.base as? String else { throw CKError(.invalidArguments, "a dictionary key of type \(Swift.type(of: k.base)); property-list dictionaries have string keys") }
                members[key] = try PropertyListValue(foundationObject: v)
            }
            self = .dictionary(members)
            return
        }
        throw CKError(.invalidArguments, "a value of type \(type) is not a property-list type; use String, a number, Bool, Date, Data, or arrays and [String: Any] dictionaries of those")
    }
}
