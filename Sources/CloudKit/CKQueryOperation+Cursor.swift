import Foundation
import CloudStore

extension CKQueryOperation {
    public typealias Cursor = CKQueryCursor
}

/// Where the next page of a query starts, as CloudKit's `CKQueryOperation.Cursor`: it holds the
/// query, its zone and the last record given, and archives with `NSKeyedArchiver`
/// (`NSSecureCoding`), so an app can keep it and page on after a restart.
///
/// At the top level under Apple's Objective-C name, for the archiver, as ``CKRecordID``; code
/// writes `CKQueryOperation.Cursor`.
///
/// `@unchecked Sendable`: immutable, its stored properties are `let`s; `open`, as Apple's, so
/// the compiler cannot check subclasses.
open class CKQueryCursor: NSObject, NSSecureCoding, NSCopying, @unchecked Sendable {
    let query: RecordQuery
    let zoneName: String
    let cursor: QueryCursor

    init(query: RecordQuery, zoneName: String, cursor: QueryCursor) {
        self.query = query
        self.zoneName = zoneName
        self.cursor = cursor
    }

    public static var supportsSecureCoding: Bool { true }

    /// The query is kept as text: its predicate in the predicate language (which
    /// subscriptions keep too) and its sort as JSON.
    public func encode(with coder: NSCoder) {
        coder.encode(query.recordType as NSString, forKey: "recordType")
        coder.encode(query.predicate.description as NSString, forKey: "predicate")
        coder.encode(String(decoding: JSONWriter.compact(.array(query.sortDescriptors.map(Self.json))), as: UTF8.self) as NSString, forKey: "sort")
        coder.encode(zoneName as NSString, forKey: "zoneName")
        coder.encode(cursor.text as NSString, forKey: "cursor")
    }

    public required init?(coder: NSCoder) {
        func text(_ key: String) -> String? { coder.decodeObject(of: NSString.self, forKey: key) as String? }
        guard let type = text("recordType"), let predicateText = text("predicate"), let sortText = text("sort"),
              let zone = text("zoneName"), let cursorText = text("cursor"),
              let predicate = try? PredicateParser.parse(predicateText),
              let sorts = (try? JSONParser.parse(sortText))?.arrayValue else { return nil }
        var sort: [QuerySortDescriptor] = []
        for item in sorts {
            guard let descriptor = Self.descriptor(item) else { return nil }
            sort.append(descriptor)
        }
        query = RecordQuery(recordType: type, predicate: predicate, sortDescriptors: sort)
        zoneName = zone
        cursor = QueryCursor(text: cursorText)
    }

    private static func json(_ sort: QuerySortDescriptor) -> JSONValue {
        var out: [String: JSONValue] = ["key": .string(sort.key), "ascending": .bool(sort.ascending)]
        if let here = sort.relativeLocation {
            out["latitude"] = .double(here.latitude)
            out["longitude"] = .double(here.longitude)
        }
        return .object(out)
    }

    private static func descriptor(_ json: JSONValue) -> QuerySortDescriptor? {
        guard let key = json["key"]?.stringValue, let ascending = json["ascending"]?.boolValue else { return nil }
        guard let latitude = json["latitude"]?.doubleValue, let longitude = json["longitude"]?.doubleValue else {
            return QuerySortDescriptor(key: key, ascending: ascending)
        }
        return QuerySortDescriptor(key: key, relativeLocation: Location(latitude: latitude, longitude: longitude), ascending: ascending)
    }

    open func copy(with zone: NSZone? = nil) -> Any { self }

    open override func isEqual(_ object: Any?) -> Bool {
        guard let other = object as? CKQueryCursor else { return false }
        return other.query == query && other.zoneName == zoneName && other.cursor == cursor
    }

    open override var hash: Int { cursor.text.hashValue }

    open override var description: String { cursor.text }
}
