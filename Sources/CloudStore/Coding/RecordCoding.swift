import Foundation

/// Record ⇄ CloudKit Web Services record dictionary.
package enum RecordCoding {
    // MARK: Encoding

    public static func encode(_ record: Record) -> JSONValue {
        var object: [String: JSONValue] = [
            "recordName": .string(record.recordID.recordName),
            "recordType": .string(record.recordType),
            "zoneID": .object([
                "zoneName": .string(record.recordID.zoneID.zoneName),
                "ownerName": .string(record.recordID.zoneID.ownerName),
            ]),
            "fields": .object(Dictionary(uniqueKeysWithValues: record.fields.map { ($0.key, encodeField($0.value, encrypted: record.encryptedKeys.contains($0.key))) })),
        ]
        if let tag = record.recordChangeTag { object["recordChangeTag"] = .string(tag) }
        if let c = record.created { object["created"] = encode(c) }
        if let m = record.modified { object["modified"] = encode(m) }
        for (key, value) in sharingMembers(record) { object[key] = value }
        return .object(object)
    }

    /// The sharing keys of a record's dictionary, in key order: `parent` and `share` (each
    /// `{"recordName"}`), and for a share its `participants`, `publicPermission`, `shortGUID`
    /// and `rootRecordName` (absent for a zone-wide share), with `allowsAccessRequests`,
    /// `requesters` and `blockedIdentities` when they say something.
    static func sharingMembers(_ record: Record) -> [(String, JSONValue)] {
        var members: [(String, JSONValue)] = []
        if let info = record.shareInfo {
            // Access requests (iOS 26), only when used: files of shares without them stay as
            // they were.
            if info.allowsAccessRequests { members.append(("allowsAccessRequests", .bool(true))) }
            if !info.blocked.isEmpty { members.append(("blockedIdentities", .array(info.blocked.map(encode)))) }
        }
        if let parent = record.parent { members.append(("parent", .object(["recordName": .string(parent)]))) }
        if let info = record.shareInfo {
            members.append(("participants", .array(info.participants.map(encode))))
            members.append(("publicPermission", .string(info.publicPermission.rawValue)))
            if !info.requesters.isEmpty { members.append(("requesters", .array(info.requesters.map(encode)))) }
            if let root = info.rootRecordName { members.append(("rootRecordName", .string(root))) }
        }
        if let share = record.share { members.append(("share", .object(["recordName": .string(share)]))) }
        if let info = record.shareInfo, !info.shortGUID.isEmpty { members.append(("shortGUID", .string(info.shortGUID))) }
        return members
    }

    /// A participant as Web Services write one: its user identity, role (`type`), permission
    /// and acceptance status.
    public static func encode(_ p: ShareInfo.Participant) -> JSONValue {
        var object: [String: JSONValue] = [
            "acceptanceStatus": .string(p.acceptanceStatus.rawValue),
            "permission": .string(p.permission.rawValue),
            "type": .string(p.role.rawValue),
            "userIdentity": identity(p.userRecordName, email: p.emailAddress),
        ]
        if let id = p.participantID { object["participantId"] = .string(id) }
        if let token = p.oneTimeToken { object["oneTimeToken"] = .string(token) }
        if p.isApprovedRequester { object["isApprovedRequester"] = .bool(true) }
        if let added = p.added { object["added"] = .int(added) }
        return .object(object)
    }

    /// A user who asked for access, or was blocked: their identity, when they asked, and the
    /// share's change tag their request made.
    static func encode(_ r: ShareInfo.Requester) -> JSONValue {
        var object: [String: JSONValue] = ["userIdentity": identity(r.userRecordName, email: r.emailAddress), "requested": .int(r.requested)]
        if let tag = r.changeTag { object["changeTag"] = .string(tag) }
        return .object(object)
    }

    static func identity(_ userRecordName: String, email: String?) -> JSONValue {
        var identity: [String: JSONValue] = ["userRecordName": .string(userRecordName)]
        if let email { identity["lookupInfo"] = .object(["emailAddress": .string(email)]) }
        return .object(identity)
    }

    /// The record's file: canonical pretty JSON with a trailing newline, the bytes
    /// `JSONWriter.pretty(encode(record))` gives, written without the tree (`RecordWriter`).
    public static func fileBytes(_ record: Record) -> [UInt8] { RecordWriter.fileBytes(record) }

    static func encode(_ stamp: Stamp) -> JSONValue {
        .object([
            "timestamp": .int(stamp.timestamp),
            "userRecordName": .string(stamp.userRecordName),
            "deviceID": .string(stamp.deviceID),
        ])
    }

    /// A field dictionary: `type` and `value`, `"isEncrypted": true` for an encrypted field
    /// (as Apple's Web Services write it, with the type's plain name), and for a date that is
    /// no whole millisecond its `fraction` (``fraction(of:)``).
    public static func encodeField(_ value: FieldValue, encrypted: Bool = false) -> JSONValue {
        var o: [String: JSONValue] = ["type": .string(value.type.name), "value": encodeValue(value)]
        if encrypted { o["isEncrypted"] = .bool(true) }
        if let fraction = fraction(of: value) { o["fraction"] = fraction }
        return .object(o)
    }

    /// The part of a millisecond a TIMESTAMP holds past its `value` (milliseconds since 1970,
    /// rounded, as Web Services write it): a number, or for a TIMESTAMP_LIST one per element;
    /// nil when every date is a whole millisecond. With it a date is read back exactly as it
    /// was saved (`Date.millisecondParts`); a reader that ignores it gets the date to the
    /// millisecond.
    public static func fraction(of value: FieldValue) -> JSONValue? {
        switch value {
        case .timestamp(let date):
            let fraction = date.millisecondParts.fraction
            return fraction == 0 ? nil : .double(fraction)
        case .list(.timestamp, let items):
            let fractions = items.map { item -> Double in
                if case .timestamp(let date) = item { date.millisecondParts.fraction } else { 0 }
            }
            return fractions.allSatisfy { $0 == 0 } ? nil : .array(fractions.map { .double($0) })
        default:
            return nil
        }
    }

    static func encodeValue(_ value: FieldValue) -> JSONValue {
        switch value {
        case .string(let s): .string(s)
        case .int64(let i): .int(i)
        case .double(let d): .double(d)
        case .bytes(let d): .string(d.base64EncodedString())
        case .timestamp(let date): .int(date.millisecondsSince1970)
        case .location(let l): .object([
            "latitude": .double(l.latitude), "longitude": .double(l.longitude),
            "altitude": .double(l.altitude), "horizontalAccuracy": .double(l.horizontalAccuracy),
            "verticalAccuracy": .double(l.verticalAccuracy), "course": .double(l.course),
            "speed": .double(l.speed), "timestamp": .int(l.timestamp),
        ])
        case .reference(let r): .object(["recordName": .string(r.recordName), "action": .string(r.action.rawValue)])
        case .asset(let a):
            if let pending = a.pendingFile { .object(["path": .string(pending)]) }
            else { .object(["fileChecksum": .string(a.fileChecksum), "size": .int(a.size)]) }
        case .list(_, let values): .array(values.map(encodeValue))
        }
    }

    // MARK: Decoding

    /// How strictly to read a dictionary.
    public enum Mode: Sendable {
        /// A file the store wrote: every part must be there and typed.
        case stored
        /// Input from a person or a client: types may be left out where the value makes them
        /// plain, a missing record name gets a UUID, system fields are ignored except
        /// `recordChangeTag` (the version the edit is based on).
        case input
    }

    /// The result of decoding input: the record and the keys whose type was inferred, which a
    /// save may still fit to the schema (an integer for a `DOUBLE` or `TIMESTAMP` field).
    public struct Decoded: Sendable {
        public var record: Record
        public var inferredKeys: Set<String>
    }

    public static func decode(_ json: JSONValue, mode: Mode, zoneID defaultZone: ZoneID = .default) throws(CKError) -> Decoded {
        guard let object = json.objectValue else {
            throw .invalid("a record must be a JSON object with \"recordType\" and \"fields\", found \(json.kindName)")
        }
        let known: Set<String> = ["recordName", "recordType", "zoneID", "fields", "recordChangeTag", "created", "modified", "deleted", "pluginFields",
                                  "parent", "share", "participants", "publicPermission", "shortGUID", "rootRecordName",
                                  "allowsAccessRequests", "requesters", "blockedIdentities"]
        if let unknown = object.keys.sorted().first(where: { !known.contains($0) }) {
            throw .invalid("unknown key \"\(unknown)\" in a record; fields go inside \"fields\" (known keys: \(known.sorted().joined(separator: ", ")))")
        }
        guard let recordType = object["recordType"]?.stringValue else {
            throw .invalid("the record has no \"recordType\" string")
        }
        let recordName: String
        switch object["recordName"] {
        case .string(let s)?: recordName = s
        case nil where mode == .input: recordName = UUIDName.make()
        default: throw .invalid("\"recordName\" must be a string")
        }
        var zoneID = defaultZone
        if let z = object["zoneID"] {
            guard let zoneName = z["zoneName"]?.stringValue else { throw .invalid("\"zoneID\" must be an object with a \"zoneName\" string") }
            zoneID.zoneName = zoneName
            if let owner = z["ownerName"]?.stringValue { zoneID.ownerName = owner }
        }
        let recordID = RecordID(recordName: recordName, zoneID: zoneID)
        var fields: [String: FieldValue] = [:]
        var inferred: Set<String> = []
        var encrypted: Set<String> = []
        switch object["fields"] {
        case .object(let members)?:
            for (key, raw) in members {
                let (value, wasInferred) = try decodeField(raw, key: key, mode: mode)
                if let value { fields[key] = value }
                if wasInferred { inferred.insert(key) }
                if try isEncrypted(raw, key: key) { encrypted.insert(key) }
            }
        case nil where mode == .input: break
        default: throw .invalid("\"fields\" must be an object of field name to {\"type\", \"value\"}")
        }
        let tag: String?
        switch object["recordChangeTag"] {
        case .string(let s)?: tag = s
        case .int(let i)?: tag = String(i)
        case nil, .null?: tag = nil
        default: throw .invalid("\"recordChangeTag\" must be a string")
        }
        let parent = try decodeReferenceName(object["parent"], "parent")
        let shareInfo = try decodeShareInfo(object, recordType: recordType, mode: mode)
        var record: Record
        if mode == .stored {
            record = Record(stored: recordType, recordID: recordID, fields: fields, encryptedKeys: encrypted, tag: tag,
                            created: try decodeStamp(object["created"], "created"),
                            modified: try decodeStamp(object["modified"], "modified"),
                            parent: parent, share: try decodeReferenceName(object["share"], "share"), shareInfo: shareInfo)
        } else {
            // `share` is the store's to set: an input's is ignored, as other system fields are.
            record = Record(stored: recordType, recordID: recordID, fields: fields, encryptedKeys: encrypted, tag: tag, created: nil, modified: nil,
                            parent: parent, shareInfo: shareInfo)
            record.markChanged(fields.keys)
            if object["parent"] != nil { record.markChanged([Record.parentKey]) }
            // A field given as null is a removal: it counts as changed.
            if case .object(let members)? = object["fields"] {
                record.markChanged(members.filter { $0.value == .null || $0.value["value"] == .null }.keys)
            }
        }
        return Decoded(record: record, inferredKeys: inferred)
    }

    /// The record name of a `parent` or `share` reference: `{"recordName": …}`; nil when absent or null.
    static func decodeReferenceName(_ json: JSONValue?, _ name: String) throws(CKError) -> String? {
        guard let json, json != .null else { return nil }
        guard let recordName = json["recordName"]?.stringValue else {
            throw .invalid("\"\(name)\" must be an object with a \"recordName\" string, such as {\"recordName\": \"list-1\"}, or null for none")
        }
        return recordName
    }

    /// A share's own keys: `participants`, `publicPermission`, `allowsAccessRequests`,
    /// `requesters`, `blockedIdentities` and (for a new share) `rootRecordName`, which a client
    /// may set (the store checks them against the share as stored), and `shortGUID`, which only
    /// the store sets (ignored in input).
    static func decodeShareInfo(_ object: [String: JSONValue], recordType: String, mode: Mode) throws(CKError) -> ShareInfo? {
        let keys = ["participants", "publicPermission", "shortGUID", "rootRecordName", "allowsAccessRequests", "requesters", "blockedIdentities"]
        guard recordType == ShareInfo.recordType else {
            if let key = keys.first(where: { object[$0] != nil }) {
                throw .invalid("\"\(key)\" belongs to shares (records of type \(ShareInfo.recordType)); a \(recordType) record cannot hold it")
            }
            return nil
        }
        if mode == .input && !["participants", "publicPermission", "rootRecordName", "allowsAccessRequests", "requesters", "blockedIdentities"].contains(where: { object[$0] != nil }) {
            return nil
        }
        var info = ShareInfo()
        if let raw = object["publicPermission"] {
            guard let s = raw.stringValue, let p = ShareInfo.Permission(rawValue: s) else {
                throw .invalid("\"publicPermission\" must be one of \(ShareInfo.Permission.allCases.map(\.rawValue).joined(separator: ", ")), found \(raw.kindName)")
            }
            info.publicPermission = p
        }
        if let raw = object["participants"] {
            guard let list = raw.arrayValue else { throw .invalid("\"participants\" must be an array of participant objects") }
            info.participants = try list.enumerated().map { (i, p) throws(CKError) in try decodeParticipant(p, index: i) }
        }
        if mode == .stored { info.shortGUID = object["shortGUID"]?.stringValue ?? "" }
        if let raw = object["rootRecordName"] {
            guard let root = raw.stringValue else { throw .invalid("\"rootRecordName\" must be the name of the record the share shares, a string") }
            info.rootRecordName = root
        }
        if let raw = object["allowsAccessRequests"] {
            guard let allows = raw.boolValue else { throw .invalid("\"allowsAccessRequests\" must be true or false, found \(raw.kindName)") }
            info.allowsAccessRequests = allows
        }
        info.requesters = try decodeRequesters(object["requesters"], key: "requesters")
        info.blocked = try decodeRequesters(object["blockedIdentities"], key: "blockedIdentities")
        return info
    }

    static func decodeRequesters(_ json: JSONValue?, key: String) throws(CKError) -> [ShareInfo.Requester] {
        guard let json else { return [] }
        guard let list = json.arrayValue else { throw .invalid("\"\(key)\" must be an array of {\"userIdentity\": {\"userRecordName\"}, \"requested\"} objects") }
        return try list.enumerated().map { (i, r) throws(CKError) in
            guard let name = r["userIdentity"]?["userRecordName"]?.stringValue else {
                throw .invalid("\(key) entry \(i + 1) needs \"userIdentity\": {\"userRecordName\": \"_…\"}, a user of the container (ckfs user list)")
            }
            return ShareInfo.Requester(userRecordName: name, emailAddress: r["userIdentity"]?["lookupInfo"]?["emailAddress"]?.stringValue,
                                       requested: r["requested"]?.int64Value ?? 0, changeTag: r["changeTag"]?.stringValue)
        }
    }

    static func decodeParticipant(_ json: JSONValue, index: Int) throws(CKError) -> ShareInfo.Participant {
        let at = "participant \(index + 1)"
        // A one-time URL's participant has an ID and no user until one accepts through it.
        guard let name = json["userIdentity"]?["userRecordName"]?.stringValue ?? (json["participantId"]?.stringValue != nil ? "" : nil) else {
            throw .invalid("\(at) needs \"userIdentity\": {\"userRecordName\": \"_…\"}, the user record name of a user of the container (ckfs user list), or, for a one-time URL's participant, only a \"participantId\"")
        }
        func value<E: RawRepresentable & CaseIterable>(_ key: String, _ fallback: E, _ parse: (String) -> E?) throws(CKError) -> E where E.RawValue == String {
            guard let raw = json[key] else { return fallback }
            guard let s = raw.stringValue, let e = parse(s) else {
                throw .invalid("\(at): \"\(key)\" must be one of \(E.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            return e
        }
        return ShareInfo.Participant(
            userRecordName: name, role: try value("type", ShareInfo.Role.privateUser, ShareInfo.Role.init(text:)),
            permission: try value("permission", ShareInfo.Permission.readOnly, ShareInfo.Permission.init(rawValue:)),
            acceptanceStatus: try value("acceptanceStatus", ShareInfo.AcceptanceStatus.pending, ShareInfo.AcceptanceStatus.init(text:)),
            emailAddress: json["userIdentity"]?["lookupInfo"]?["emailAddress"]?.stringValue,
            participantID: json["participantId"]?.stringValue, oneTimeToken: json["oneTimeToken"]?.stringValue,
            isApprovedRequester: json["isApprovedRequester"]?.boolValue ?? false, added: json["added"]?.int64Value)
    }

    static func decodeStamp(_ json: JSONValue?, _ name: String) throws(CKError) -> Stamp? {
        guard let json else { return nil }
        guard let ts = json["timestamp"]?.int64Value, let user = json["userRecordName"]?.stringValue else {
            throw .invalid("\"\(name)\" must hold \"timestamp\" and \"userRecordName\"")
        }
        return Stamp(timestamp: ts, userRecordName: user, deviceID: json["deviceID"]?.stringValue ?? "")
    }

    /// Whether a field dictionary says `"isEncrypted": true`, or names its type as the schema
    /// does (`ENCRYPTED_STRING`).
    static func isEncrypted(_ raw: JSONValue, key: String) throws(CKError) -> Bool {
        guard case .object(let o) = raw else { return false }
        guard let flag = o["isEncrypted"] else { return o["type"]?.stringValue?.hasPrefix(FieldType.encryptedPrefix) == true }
        guard let b = flag.boolValue else { throw .invalid("field \"\(key)\": \"isEncrypted\" must be true or false") }
        return b
    }

    static let fieldKeys: Set<String> = ["type", "value", "isEncrypted", "fraction"]

    /// Decodes one field; nil value means the field is removed (given as null).
    static func decodeField(_ raw: JSONValue, key: String, mode: Mode) throws(CKError) -> (FieldValue?, Bool) {
        if raw == .null { return (nil, false) }
        if case .object(let o) = raw, o["type"] != nil || o["value"] != nil, o.keys.allSatisfy(fieldKeys.contains) {
            guard let value = o["value"] else { throw .invalid("field \"\(key)\": \"value\" is missing") }
            if value == .null { return (nil, false) }
            guard let typeName = o["type"] else {
                guard mode == .input else { throw .invalid("field \"\(key)\": \"type\" is missing") }
                if o["fraction"] != nil { throw .invalid("field \"\(key)\": \"fraction\" belongs to a date; add \"type\": \"TIMESTAMP\"") }
                return (try infer(value, key: key), true)
            }
            guard let name = typeName.stringValue, let type = FieldType(name: name) else {
                throw .invalid("field \"\(key)\": unknown type \(JSONWriter.compactString(typeName)); use one of \(FieldType.allNames.joined(separator: ", "))")
            }
            return (try decodeValue(value, as: type, key: key, fraction: o["fraction"]), false)
        }
        guard mode == .input else { throw .invalid("field \"\(key)\" must be an object {\"type\": …, \"value\": …}") }
        return (try infer(raw, key: key), true)
    }

    /// The untyped shorthand, typed by its shape as CloudKit's server types a value sent
    /// without `type`: a string, an integer, a double, a location dictionary (with `latitude`
    /// and `longitude`), a reference dictionary (with `recordName`), or a non-empty list of one
    /// of these. A string stays a STRING: bytes and dates given as text need their type.
    static func infer(_ value: JSONValue, key: String) throws(CKError) -> FieldValue {
        switch value {
        case .string(let s): return .string(s)
        case .int(let i): return .int64(i)
        case .double(let d): return .double(d)
        // CloudKit keeps a Boolean as INT64 1 or 0 (CloudKit JS sends JavaScript's true).
        case .bool(let b): return .int64(b ? 1 : 0)
        case .object:
            guard let kind = dictionaryKind(value) else {
                throw .invalid("field \"\(key)\": an object without a \"type\" must be a location ({\"latitude\": …, \"longitude\": …}) or a reference ({\"recordName\": …}); write {\"type\": \"…\", \"value\": …} with one of \(FieldType.allNames.joined(separator: ", "))")
            }
            return try decodeScalar(value, kind: kind, key: key)
        case .array(let elements):
            if elements.allSatisfy({ $0.stringValue != nil }), !elements.isEmpty {
                return .list(.string, elements.map { .string($0.stringValue!) })
            }
            if elements.allSatisfy({ if case .int = $0 { true } else { false } }), !elements.isEmpty {
                return .list(.int64, elements.map { .int64($0.int64Value!) })
            }
            if elements.allSatisfy({ $0.boolValue != nil }), !elements.isEmpty {
                return .list(.int64, elements.map { .int64($0.boolValue! ? 1 : 0) })
            }
            if elements.allSatisfy({ $0.doubleValue != nil && $0.boolValue == nil }), !elements.isEmpty {
                return .list(.double, elements.map { .double($0.doubleValue!) })
            }
            if let kind = elements.first.flatMap(dictionaryKind), elements.allSatisfy({ dictionaryKind($0) == kind }) {
                return try decodeValue(value, as: FieldType(kind, list: true), key: key)
            }
            throw .invalid("field \"\(key)\": a list without a \"type\" must be a non-empty list of strings, numbers, locations or references, all of one kind; write {\"type\": \"…_LIST\", \"value\": [...]}")
        default:
            throw .invalid("field \"\(key)\": \(value.kindName) needs an explicit type; write {\"type\": \"STRING\", \"value\": …} with one of \(FieldType.allNames.joined(separator: ", "))")
        }
    }

    /// The kind a dictionary sent without `type` stands for: a location or a reference.
    private static func dictionaryKind(_ value: JSONValue) -> FieldType.Kind? {
        guard case .object(let o) = value else { return nil }
        if o["latitude"] != nil && o["longitude"] != nil { return .location }
        if o["recordName"] != nil { return .reference }
        return nil
    }

    /// A field's value of type `type`; `fraction` is the field dictionary's `fraction`, for a
    /// TIMESTAMP or TIMESTAMP_LIST (``fraction(of:)``).
    public static func decodeValue(_ value: JSONValue, as type: FieldType, key: String, fraction: JSONValue? = nil) throws(CKError) -> FieldValue {
        if let fraction, fraction != .null, type.kind != .timestamp {
            throw .invalid("field \"\(key)\": \"fraction\" belongs to TIMESTAMP fields only; remove it")
        }
        if type.isList {
            guard let elements = value.arrayValue else {
                throw .invalid("field \"\(key)\" of type \(type.name) needs a JSON array, found \(value.kindName)")
            }
            var fractions: [JSONValue]?
            if let fraction, fraction != .null {
                guard let list = fraction.arrayValue, list.count == elements.count else {
                    throw .invalid("field \"\(key)\": \"fraction\" of a TIMESTAMP_LIST is a list of \(elements.count) numbers, one per date")
                }
                fractions = list
            }
            var values: [FieldValue] = []
            values.reserveCapacity(elements.count)
            for (i, e) in elements.enumerated() {
                values.append(try decodeScalar(e, kind: type.kind, key: "\(key)[\(i)]", fraction: fractions?[i]))
            }
            return .list(type.kind, values)
        }
        return try decodeScalar(value, kind: type.kind, key: key, fraction: fraction)
    }

    static func decodeScalar(_ value: JSONValue, kind: FieldType.Kind, key: String, fraction: JSONValue? = nil) throws(CKError) -> FieldValue {
        func wrong(_ expected: String) -> CKError {
            .invalid("field \"\(key)\" of type \(kind.rawValue) needs \(expected), found \(value.kindName) \(JSONWriter.compactString(value).prefix(40))")
        }
        switch kind {
        case .string:
            guard let s = value.stringValue else { throw wrong("a string") }
            return .string(s)
        case .int64:
            // A Boolean is 1 or 0, and a whole number written as a double (5.0) is that integer.
            if let b = value.boolValue { return .int64(b ? 1 : 0) }
            guard let i = value.int64Value else { throw wrong("an integer") }
            return .int64(i)
        case .double:
            guard let d = value.doubleValue, value.boolValue == nil else { throw wrong("a number") }
            return .double(d)
        case .bytes:
            guard let s = value.stringValue, let d = Data(base64Encoded: s) else { throw wrong("a base64 string") }
            return .bytes(d)
        case .timestamp:
            var part = 0.0
            if let fraction, fraction != .null {
                guard let f = fraction.doubleValue, fraction.boolValue == nil, abs(f) < 1 else {
                    throw .invalid("field \"\(key)\": \"fraction\" is the part of a millisecond past \"value\", a number between -1 and 1; found \(JSONWriter.compactString(fraction).prefix(40))")
                }
                part = f
            }
            // A fraction in the value itself (a client counting in doubles) or beside it, not both.
            guard let d = value.doubleValue, value.boolValue == nil, value.int64Value != nil || part == 0 else {
                throw wrong("milliseconds since 1970 as a number")
            }
            guard let date = Date(storableMillisecondsSince1970: d, fraction: part) else {
                throw .invalid("field \"\(key)\": \(JSONWriter.compactString(value)) milliseconds since 1970 is outside the years 1 to 9999, which a date field holds")
            }
            return .timestamp(date)
        case .location:
            guard let o = value.objectValue, let lat = o["latitude"]?.doubleValue, let lon = o["longitude"]?.doubleValue else {
                throw wrong("an object with \"latitude\" and \"longitude\"")
            }
            guard (-90...90).contains(lat), (-180...180).contains(lon) else {
                throw .invalid("field \"\(key)\": latitude must be within ±90 and longitude within ±180")
            }
            return .location(Location(
                latitude: lat, longitude: lon, altitude: o["altitude"]?.doubleValue ?? 0,
                horizontalAccuracy: o["horizontalAccuracy"]?.doubleValue ?? 0,
                verticalAccuracy: o["verticalAccuracy"]?.doubleValue ?? -1,
                course: o["course"]?.doubleValue ?? -1, speed: o["speed"]?.doubleValue ?? -1,
                timestamp: o["timestamp"]?.int64Value ?? 0))
        case .reference:
            guard let o = value.objectValue, let name = o["recordName"]?.stringValue else {
                throw wrong("an object with \"recordName\" and \"action\" (NONE or DELETE_SELF)")
            }
            let actionName = o["action"]?.stringValue ?? "NONE"
            guard let action = Reference.Action(rawValue: actionName) else {
                throw .invalid("field \"\(key)\": reference action \"\(actionName)\" is not NONE or DELETE_SELF")
            }
            return .reference(Reference(recordName: name, action: action))
        case .asset:
            guard let o = value.objectValue else { throw wrong("an object with \"fileChecksum\" and \"size\", or \"path\"") }
            if let path = o["path"]?.stringValue { return .asset(Asset(file: path)) }
            guard let sum = o["fileChecksum"]?.stringValue, let size = o["size"]?.int64Value else {
                throw wrong("an object with \"fileChecksum\" and \"size\", or \"path\"")
            }
            guard sum.utf8.count == 64, sum.utf8.allSatisfy({ ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x61 && $0 <= 0x66) }) else {
                throw .invalid("field \"\(key)\": asset fileChecksum must be 64 lower-case hex digits (SHA-256)")
            }
            return .asset(Asset(fileChecksum: sum, size: size))
        }
    }
}
