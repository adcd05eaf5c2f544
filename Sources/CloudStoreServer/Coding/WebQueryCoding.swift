import CloudStore
import Foundation

/// A query dictionary (`recordType`, `filterBy`, `sortBy`) as the engine's ``RecordQuery``.
///
/// Every filter must hold (AND). Comparators the engine has no single form for are built from
/// its parts: `NOT_IN` is NOT of IN, `CONTAINS_ANY_TOKENS` is NOT of AND of NOT, and so on.
enum WebQueryCoding {
    /// System fields by their Web Services names, as the engine's keys.
    static let systemFields: [String: String] = [
        "recordName": "recordID",
        "createdTimestamp": "creationDate",
        "modifiedTimestamp": "modificationDate",
        "createdUserRecordName": "creatorUserRecordID",
        "modifiedUserRecordName": "lastModifiedUserRecordID",
        "parent": "parent",
        "share": "share",
    ]

    /// The index names of Apple's table of system fields, as a `fieldName` gives them.
    static let systemIndexNames: [String: String] = [
        "___recordID": "recordID",
        "___createTime": "creationDate",
        "___modTime": "modificationDate",
        "___createdBy": "creatorUserRecordID",
        "___modifiedBy": "lastModifiedUserRecordID",
        "___parent": "parent",
        "___share": "share",
    ]

    static func decode(_ json: JSONValue?, db: Database) throws(CKError) -> RecordQuery {
        guard let json, case .object = json else {
            throw CKError(.invalidArguments, "\"query\" is required: an object with \"recordType\" and optional \"filterBy\" and \"sortBy\"")
        }
        guard let named = json["recordType"]?.stringValue, !named.isEmpty else {
            throw CKError(.invalidArguments, "the query has no \"recordType\" string")
        }
        let type = WebRecordCoding.recordType(named)
        let fieldTypes = (try? db.container.schema.fields(of: type, environment: db.environment)) ?? nil
        var parts: [QueryPredicate] = []
        for (i, filter) in (try list(json["filterBy"], "filterBy")).enumerated() {
            parts.append(try predicate(filter, at: "filterBy[\(i)]", fieldTypes: fieldTypes ?? [:]))
        }
        var sorts: [QuerySortDescriptor] = []
        for (i, sort) in (try list(json["sortBy"], "sortBy")).enumerated() {
            let key = try fieldKey(sort, at: "sortBy[\(i)]")
            let ascending = sort["ascending"]?.boolValue ?? true
            if let raw = sort["relativeLocation"] {
                // A LOCATION field dictionary, as Apple's reference gives it ({"value": {...},
                // "type": "LOCATION"}), or the bare location dictionary inside one.
                let place = "sortBy[\(i)].relativeLocation"
                let shape = "a LOCATION field dictionary such as {\"value\": {\"latitude\": 48.85, \"longitude\": 2.35}, \"type\": \"LOCATION\"}, or its value alone"
                var point = raw
                if case .object(let field) = raw, let value = field["value"] {
                    if let type = field["type"], type.stringValue != "LOCATION" {
                        throw CKError(.invalidArguments, "\(place) has type \(type.stringValue.map { "\"\($0)\"" } ?? type.kindName); it must be \(shape)")
                    }
                    point = value
                }
                guard case .object = point, case .location(let point) = try RecordCoding.decodeValue(point, as: FieldType(.location), key: place) else {
                    throw CKError(.invalidArguments, "\(place) must be \(shape)")
                }
                sorts.append(QuerySortDescriptor(key: key, relativeLocation: point, ascending: ascending))
            } else {
                sorts.append(QuerySortDescriptor(key: key, ascending: ascending))
            }
        }
        let predicate: QueryPredicate = parts.isEmpty ? .all : parts.count == 1 ? parts[0] : .and(parts)
        return RecordQuery(recordType: type, predicate: predicate, sortDescriptors: sorts)
    }

    // MARK: Back to filters

    /// The filters of a predicate, for a subscription's `query`; nil when some part has no
    /// filter of its own (a predicate saved by the CLI or the Swift API, such as an OR).
    static func encode(_ predicate: QueryPredicate) -> [JSONValue]? {
        switch predicate {
        case .all: return []
        case .and(let parts):
            var out: [JSONValue] = []
            for part in parts {
                guard let f = encode(part) else { return nil }
                out += f
            }
            return out
        default:
            return filter(predicate).map { [$0] }
        }
    }

    private static func filter(_ p: QueryPredicate) -> JSONValue? {
        func make(_ comparator: String, _ key: String, _ value: PredicateValue, distance: Double? = nil) -> JSONValue {
            var o: [String: JSONValue] = ["comparator": .string(comparator), "fieldValue": fieldValue(value)]
            if let system = systemFields.first(where: { $0.value == key })?.key {
                o["systemFieldName"] = .string(system)
            } else {
                o["fieldName"] = .string(key)
            }
            if let distance { o["distance"] = .double(distance) }
            return .object(o)
        }
        let names: [ComparisonOperator: String] = [.equal: "EQUALS", .notEqual: "NOT_EQUALS", .less: "LESS_THAN",
                                                   .lessOrEqual: "LESS_THAN_OR_EQUALS", .greater: "GREATER_THAN",
                                                   .greaterOrEqual: "GREATER_THAN_OR_EQUALS"]
        switch p {
        case .compare(let key, let op, let value): return make(names[op]!, key, value)
        case .isIn(let key, let values): return make("IN", key, .list(values))
        case .beginsWith(let key, let prefix): return make("BEGINS_WITH", key, .string(prefix))
        case .contains(let key, let value): return make("LIST_CONTAINS", key, value)
        case .tokens(let text):
            return .object(["comparator": .string("CONTAINS_ALL_TOKENS"), "fieldName": .string("allTokens"),
                            "fieldValue": .object(["value": .string(text), "type": .string("STRING")])])
        case .distance(let key, let location, .less, let metres): return make("NEAR", key, .location(location), distance: metres)
        case .not(.isIn(let key, let values)): return make("NOT_IN", key, .list(values))
        case .not(.beginsWith(let key, let prefix)): return make("NOT_BEGINS_WITH", key, .string(prefix))
        case .not(.contains(let key, let value)): return make("NOT_LIST_CONTAINS", key, value)
        default: return nil
        }
    }

    private static func fieldValue(_ value: PredicateValue) -> JSONValue {
        func typed(_ v: PredicateValue) -> (value: JSONValue, type: String) {
            switch v {
            case .string(let s): return (JSONValue.string(s), "STRING")
            case .int(let i): return (JSONValue.int(i), "INT64")
            case .double(let d): return (JSONValue.double(d), "DOUBLE")
            case .date(let d): return (JSONValue.int(d.millisecondsSince1970), "TIMESTAMP")
            case .reference(let name): return (JSONValue.object(["recordName": .string(name)]), "REFERENCE")
            case .location(let l):
                return (JSONValue.object(["latitude": .double(l.latitude), "longitude": .double(l.longitude)]), "LOCATION")
            case .list(let items):
                let parts = items.map(typed)
                return (JSONValue.array(parts.map(\.value)), (parts.first?.type ?? "STRING") + "_LIST")
            }
        }
        let (v, t) = typed(value)
        return .object(["value": v, "type": .string(t)])
    }

    private static func list(_ json: JSONValue?, _ name: String) throws(CKError) -> [JSONValue] {
        switch json {
        case nil, .null?: return []
        case .array(let items)?: return items
        default: throw CKError(.invalidArguments, "\"\(name)\" must be an array")
        }
    }

    private static func fieldKey(_ json: JSONValue, at place: String) throws(CKError) -> String {
        if let system = json["systemFieldName"]?.stringValue {
            guard let key = systemFields[system] else {
                throw CKError(.invalidArguments, "\(place): system field \"\(system)\" cannot be queried here; use one of \(systemFields.keys.sorted().joined(separator: ", "))")
            }
            return key
        }
        guard let name = json["fieldName"]?.stringValue, !name.isEmpty else {
            throw CKError(.invalidArguments, "\(place) needs a \"fieldName\" (or a \"systemFieldName\")")
        }
        return systemIndexNames[name] ?? name
    }

    private static func predicate(_ filter: JSONValue, at place: String, fieldTypes: [String: FieldType]) throws(CKError) -> QueryPredicate {
        guard case .object = filter, let comparator = filter["comparator"]?.stringValue else {
            throw CKError(.invalidArguments, "\(place) needs a \"comparator\" string")
        }
        guard let fieldValue = filter["fieldValue"], case .object = fieldValue, let raw = fieldValue["value"] else {
            throw CKError(.invalidArguments, "\(place) needs a \"fieldValue\" of the form {\"value\": …, \"type\": …}")
        }
        // Token searches cover every string field; a field name, if given, is not needed.
        if comparator == "CONTAINS_ALL_TOKENS" || comparator == "CONTAINS_ANY_TOKENS" {
            guard let text = raw.stringValue else { throw CKError(.invalidArguments, "\(place): \(comparator) needs a string of words") }
            let words = text.split(whereSeparator: { $0.isWhitespace || $0.isPunctuation }).map(String.init)
            if comparator == "CONTAINS_ALL_TOKENS" { return .tokens(words.joined(separator: " ")) }
            return .not(.and(words.map { .not(.tokens($0)) }))
        }
        let key = try fieldKey(filter, at: place)
        let declared = fieldValue["type"]?.stringValue.flatMap { FieldType(name: $0 == "ASSET" ? "ASSETID" : $0) }
        let type = declared ?? fieldTypes[key] ?? (key.hasSuffix("Date") && WebQueryCoding.systemFields.values.contains(key) ? FieldType(.timestamp) : nil)
        let value = try self.value(raw, type: type, at: place)
        func elements() throws(CKError) -> [PredicateValue] {
            guard case .list(let items) = value else {
                throw CKError(.invalidArguments, "\(place): \(comparator) needs a list value, as {\"value\": [...], \"type\": \"STRING_LIST\"}")
            }
            return items
        }
        func prefix() throws(CKError) -> String {
            guard case .string(let s) = value else { throw CKError(.invalidArguments, "\(place): \(comparator) needs a string") }
            return s
        }
        switch comparator {
        case "EQUALS": return .compare(key, .equal, value)
        case "NOT_EQUALS": return .compare(key, .notEqual, value)
        case "LESS_THAN": return .compare(key, .less, value)
        case "LESS_THAN_OR_EQUALS": return .compare(key, .lessOrEqual, value)
        case "GREATER_THAN": return .compare(key, .greater, value)
        case "GREATER_THAN_OR_EQUALS": return .compare(key, .greaterOrEqual, value)
        case "IN": return .isIn(key, try elements())
        case "NOT_IN": return .not(.isIn(key, try elements()))
        case "BEGINS_WITH", "LIST_MEMBER_BEGINS_WITH": return .beginsWith(key, try prefix())
        case "NOT_BEGINS_WITH", "NOT_LIST_MEMBER_BEGINS_WITH": return .not(.beginsWith(key, try prefix()))
        case "LIST_CONTAINS": return .contains(key, value)
        case "NOT_LIST_CONTAINS": return .not(.contains(key, value))
        case "LIST_CONTAINS_ANY": return .not(.and(try elements().map { .not(.contains(key, $0)) }))
        case "NOT_LIST_CONTAINS_ANY": return .and(try elements().map { .not(.contains(key, $0)) })
        case "LIST_CONTAINS_ALL": return .and(try elements().map { .contains(key, $0) })
        case "NOT_LIST_CONTAINS_ALL": return .not(.and(try elements().map { .contains(key, $0) }))
        case "NEAR":
            guard case .location(let here) = value, let metres = filter["distance"]?.doubleValue else {
                throw CKError(.invalidArguments, "\(place): NEAR needs a LOCATION value and a \"distance\" in metres")
            }
            return .distance(key, here, .less, metres)
        default:
            throw CKError(.invalidArguments, "\(place): unknown comparator \"\(comparator)\"")
        }
    }

    /// A filter's value as a predicate constant, typed by the filter, else by the schema,
    /// else by its JSON.
    private static func value(_ raw: JSONValue, type: FieldType?, at place: String) throws(CKError) -> PredicateValue {
        if case .array(let items) = raw {
            let element = type.map { FieldType($0.kind) }
            var values: [PredicateValue] = []
            for item in items { values.append(try value(item, type: element, at: place)) }
            return .list(values)
        }
        switch (type?.kind, raw) {
        case (.timestamp?, _):
            guard let d = raw.doubleValue, raw.boolValue == nil, let date = Date(storableMillisecondsSince1970: d) else {
                throw CKError(.invalidArguments, "\(place): a TIMESTAMP value is milliseconds since 1970, within the years 1 to 9999")
            }
            return .date(date)
        case (.reference?, .object):
            guard let name = raw["recordName"]?.stringValue else { throw CKError(.invalidArguments, "\(place): a REFERENCE value needs \"recordName\"") }
            return .reference(name)
        case (nil, .object) where raw["recordName"] != nil:
            return .reference(raw["recordName"]?.stringValue ?? "")
        case (.reference?, .string(let name)):
            return .reference(name)
        case (.location?, .object), (nil, .object):
            let decoded = try RecordCoding.decodeValue(raw, as: FieldType(.location), key: place)
            guard case .location(let l) = decoded else { throw CKError(.invalidArguments, "\(place): not a location") }
            return .location(l)
        case (.double?, _):
            guard let d = raw.doubleValue else { throw CKError(.invalidArguments, "\(place): a DOUBLE value must be a number") }
            return .double(d)
        case (.int64?, .string(let s)):
            guard let i = Int64(s) else { throw CKError(.invalidArguments, "\(place): an INT64 value must be an integer") }
            return .int(i)
        case (_, .string(let s)): return .string(s)
        case (_, .int(let i)): return .int(i)
        case (_, .bool(let b)): return .int(b ? 1 : 0)
        case (_, .double(let d)): return .double(d)
        default:
            throw CKError(.invalidArguments, "\(place): a filter cannot compare with \(raw.kindName)")
        }
    }
}
