import Foundation
import CloudStore

/// A value a ``CKRecord`` field can hold: `String`, the integer types, `Double`, `Float`, `Bool`, `Date`,
/// `Data`, ``CKRecord/Reference``, ``CKAsset``, ``CLLocation`` (or ckfs's ``Location``), `NSString`, `NSNumber`, `NSDate`,
/// `NSData`, or an array (or `NSArray`) of one of these. Not `Sendable`, as Apple's is not: Linux Foundation's
/// `NSString` and `NSData` are not.
public protocol CKRecordValueProtocol {
    var fieldValue: FieldValue { get }
}

/// Apple's name for a field's value in declarations such as `[String: CKRecordValue]`.
public typealias CKRecordValue = CKRecordValueProtocol

extension String: CKRecordValueProtocol { public var fieldValue: FieldValue { .string(self) } }
extension Int: CKRecordValueProtocol { public var fieldValue: FieldValue { .int64(Int64(self)) } }
extension Int64: CKRecordValueProtocol { public var fieldValue: FieldValue { .int64(self) } }
extension Int8: CKRecordValueProtocol { public var fieldValue: FieldValue { .int64(Int64(self)) } }
extension Int16: CKRecordValueProtocol { public var fieldValue: FieldValue { .int64(Int64(self)) } }
extension Int32: CKRecordValueProtocol { public var fieldValue: FieldValue { .int64(Int64(self)) } }
extension UInt8: CKRecordValueProtocol { public var fieldValue: FieldValue { .int64(Int64(self)) } }
extension UInt16: CKRecordValueProtocol { public var fieldValue: FieldValue { .int64(Int64(self)) } }
extension UInt32: CKRecordValueProtocol { public var fieldValue: FieldValue { .int64(Int64(self)) } }
/// An unsigned integer is kept as INT64, as Apple's: one past `Int64.max` wraps to a negative number.
extension UInt: CKRecordValueProtocol { public var fieldValue: FieldValue { .int64(Int64(truncatingIfNeeded: self)) } }
extension UInt64: CKRecordValueProtocol { public var fieldValue: FieldValue { .int64(Int64(truncatingIfNeeded: self)) } }
extension Double: CKRecordValueProtocol { public var fieldValue: FieldValue { .double(self) } }
extension Float: CKRecordValueProtocol { public var fieldValue: FieldValue { .double(Double(self)) } }
/// CloudKit keeps booleans as INT64 0 or 1.
extension Bool: CKRecordValueProtocol { public var fieldValue: FieldValue { .int64(self ? 1 : 0) } }
extension Date: CKRecordValueProtocol { public var fieldValue: FieldValue { .date(self) } }
extension Data: CKRecordValueProtocol { public var fieldValue: FieldValue { .bytes(self) } }
extension Location: CKRecordValueProtocol { public var fieldValue: FieldValue { .location(self) } }
/// Foundation's number, as older CloudKit code sets one: a floating-point number is a DOUBLE,
/// any other (`Bool` too) an INT64.
extension NSNumber: CKRecordValueProtocol {
    public var fieldValue: FieldValue {
        ["f", "d"].contains(String(cString: objCType)) ? .double(doubleValue) : .int64(int64Value)
    }
}
extension NSDate: CKRecordValueProtocol { public var fieldValue: FieldValue { .date(self as Date) } }
extension NSString: CKRecordValueProtocol { public var fieldValue: FieldValue { .string(self as String) } }
extension NSData: CKRecordValueProtocol { public var fieldValue: FieldValue { .bytes(self as Data) } }

/// Foundation's array, as older CloudKit code sets one: a list of its elements, which must be
/// field values of one type. Apple's framework raises an exception at the assignment of
/// anything else; here the save refuses it (`invalidArguments`), as it refuses a Swift list of
/// lists, since an assignment cannot fail.
extension NSArray: CKRecordValueProtocol {
    public var fieldValue: FieldValue {
        // An element that is no field value stands as a list inside the list, which no save takes.
        let values = map { ($0 as? CKRecordValueProtocol)?.fieldValue ?? .list(.string, []) }
        return .list(values.first?.type.kind ?? .string, values)
    }
}

extension Array: CKRecordValueProtocol where Element: CKRecordValueProtocol {
    public var fieldValue: FieldValue {
        let values = map(\.fieldValue)
        let kind = values.first?.type.kind ?? Self.emptyKind
        return .list(kind, values)
    }

    private static var emptyKind: FieldType.Kind {
        switch Element.self {
        case is Int.Type, is Int64.Type, is Int32.Type, is Int16.Type, is Int8.Type, is UInt.Type, is UInt64.Type,
             is UInt32.Type, is UInt16.Type, is UInt8.Type, is Bool.Type, is NSNumber.Type: .int64
        case is Double.Type, is Float.Type: .double
        case is Date.Type, is NSDate.Type: .timestamp
        case is Data.Type, is NSData.Type: .bytes
        case is Location.Type, is CLLocation.Type: .location
        case is CKRecord.Reference.Type: .reference
        case is CKAsset.Type: .asset
        default: .string
        }
    }
}

/// A file kept beside a record, an `NSObject` as Apple's `CKAsset`. Give a local file to save;
/// a fetched asset's `fileURL` points at its contents in the store. Two assets are equal when
/// they hold the same stored file, or name the same local one.
///
/// `@unchecked Sendable`: immutable; its stored properties are `let`s.
public final class CKAsset: NSObject, CKRecordValueProtocol, @unchecked Sendable {
    public let fileURL: URL?
    let stored: Asset?

    public init(fileURL: URL) {
        self.fileURL = fileURL
        self.stored = nil
        super.init()
    }

    init(stored: Asset, fileURL: URL) {
        self.stored = stored
        self.fileURL = fileURL
        super.init()
    }

    /// A fetched asset set on a record of another zone is copied there from its file.
    public var fieldValue: FieldValue {
        guard var stored else { return .asset(Asset(file: fileURL?.path ?? "")) }
        stored.copyFrom = fileURL?.path
        return .asset(stored)
    }

    public override func isEqual(_ object: Any?) -> Bool {
        guard let other = object as? CKAsset else { return false }
        return other.fieldValue == fieldValue
    }

    public override var hash: Int {
        switch fieldValue {
        case .asset(let a): a.pendingFile?.hashValue ?? a.fileChecksum.hashValue
        default: 0
        }
    }
}

extension FieldValue {
    /// The value of a field as ``CKRecord``'s subscript returns it. Numbers are `NSNumber`s, as
    /// Apple's are, so a number reads as any numeric type that holds it exactly and 0 and 1 as
    /// `Bool` (`as? Int64`, `as? Bool`, `as? Double`), and lists of them likewise.
    func swiftValue(assetURL: (Asset) -> URL) -> any CKRecordValueProtocol {
        switch self {
        case .string(let s): return s
        case .int64(let i): return NSNumber(value: i)
        case .double(let d): return NSNumber(value: d)
        case .bytes(let d): return d
        case .timestamp: return dateValue!
        case .location(let l): return CLLocation(l)
        case .reference(let r): return CKRecord.Reference(reference: r)
        case .asset(let a): return a.pendingFile.map { CKAsset(fileURL: URL(fileURLWithPath: $0)) } ?? CKAsset(stored: a, fileURL: assetURL(a))
        case .list(let kind, let values):
            let items = values.map { $0.swiftValue(assetURL: assetURL) }
            switch kind {
            case .string: return items.compactMap { $0 as? String }
            case .int64, .double: return items.compactMap { $0 as? NSNumber }
            case .bytes: return items.compactMap { $0 as? Data }
            case .timestamp: return items.compactMap { $0 as? Date }
            case .location: return items.compactMap { $0 as? CLLocation }
            case .reference: return items.compactMap { $0 as? CKRecord.Reference }
            case .asset: return items.compactMap { $0 as? CKAsset }
            }
        }
    }
}
