/// Writes records, and log entries made of them, straight to canonical JSON bytes: the same
/// bytes as ``JSONWriter`` gives for ``RecordCoding/encode(_:)`` (tests hold them to that),
/// without building the dictionary tree first.
///
/// A save encodes its record twice, for the log and for the record file, and building the
/// tree (a dictionary per object, each hashed and then sorted) was the larger part of a
/// save's CPU. Keys are written in the sorted order ``JSONWriter`` would give; only
/// field names, which are the user's, are sorted at run time.
struct RecordWriter {
    private(set) var out: [UInt8] = []
    let pretty: Bool
    private var indent = 0
    /// Whether the innermost open object or array has a member yet.
    private var hasMember: [Bool] = []

    init(pretty: Bool, capacity: Int = 512) {
        self.pretty = pretty
        out.reserveCapacity(capacity)
    }

    /// The record's file: pretty, with a trailing newline.
    static func fileBytes(_ record: Record) -> [UInt8] {
        var w = RecordWriter(pretty: true)
        w.record(record)
        w.out.append(0x0A)
        return w.out
    }

    /// The record as compact JSON.
    static func compact(_ record: Record) -> [UInt8] {
        var w = RecordWriter(pretty: false)
        w.record(record)
        return w.out
    }

    // MARK: Records

    mutating func record(_ r: Record) {
        beginObject()
        // Sharing's keys, where they sort among the others: allowsAccessRequests,
        // blockedIdentities; parent, participants, publicPermission; requesters,
        // rootRecordName, share, shortGUID.
        var sharing = RecordCoding.sharingMembers(r)[...]
        writeMembers(&sharing, before: "created")
        if let c = r.created { key("created"); stamp(c) }
        key("fields")
        if r.fields.isEmpty {
            emptyObject()
        } else {
            beginObject()
            for (name, value) in r.fields.sorted(by: { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }) {
                key(name)
                field(value, encrypted: r.encryptedKeys.contains(name))
            }
            endObject()
        }
        if let m = r.modified { key("modified"); stamp(m) }
        writeMembers(&sharing, before: "recordChangeTag")
        if let tag = r.recordChangeTag { key("recordChangeTag"); string(tag) }
        key("recordName"); string(r.recordID.recordName)
        key("recordType"); string(r.recordType)
        writeMembers(&sharing, before: "zoneID")
        key("zoneID")
        beginObject()
        key("ownerName"); string(r.recordID.zoneID.ownerName)
        key("zoneName"); string(r.recordID.zoneID.zoneName)
        endObject()
        endObject()
    }

    /// Writes the members that sort before `next`, taking them from the front of `members`.
    private mutating func writeMembers(_ members: inout ArraySlice<(String, JSONValue)>, before next: String) {
        while let (k, v) = members.first, k.utf8.lexicographicallyPrecedes(next.utf8) {
            key(k)
            JSONWriter.write(v, into: &out, indent: indent, pretty: pretty)
            members.removeFirst()
        }
    }

    mutating func stamp(_ s: Stamp) {
        beginObject()
        key("deviceID"); string(s.deviceID)
        key("timestamp"); int(s.timestamp)
        key("userRecordName"); string(s.userRecordName)
        endObject()
    }

    mutating func field(_ value: FieldValue, encrypted: Bool = false) {
        beginObject()
        if let fraction = RecordCoding.fraction(of: value) {
            key("fraction")
            switch fraction {
            case .double(let f): double(f)
            case .array(let items): array(items, inline: true) { $0.double($1.doubleValue ?? 0) }
            default: break
            }
        }
        if encrypted { key("isEncrypted"); scalar(Array("true".utf8)) }
        key("type"); string(value.type.name)
        key("value"); fieldValue(value)
        endObject()
    }

    mutating func fieldValue(_ value: FieldValue) {
        switch value {
        case .string(let s): string(s)
        case .int64(let i): int(i)
        case .double(let d): double(d)
        case .bytes(let d): string(d.base64EncodedString())
        case .timestamp(let date): int(date.millisecondsSince1970)
        case .location(let l):
            beginObject()
            key("altitude"); double(l.altitude)
            key("course"); double(l.course)
            key("horizontalAccuracy"); double(l.horizontalAccuracy)
            key("latitude"); double(l.latitude)
            key("longitude"); double(l.longitude)
            key("speed"); double(l.speed)
            key("timestamp"); int(l.timestamp)
            key("verticalAccuracy"); double(l.verticalAccuracy)
            endObject()
        case .reference(let r):
            beginObject()
            key("action"); string(r.action.rawValue)
            key("recordName"); string(r.recordName)
            endObject()
        case .asset(let a):
            beginObject()
            if let pending = a.pendingFile {
                key("path"); string(pending)
            } else {
                key("fileChecksum"); string(a.fileChecksum)
                key("size"); int(a.size)
            }
            endObject()
        case .list(_, let values):
            // As JSONWriter: lists of scalars stay on one line.
            let inline = !pretty || values.allSatisfy { v in
                switch v {
                case .location, .reference, .asset, .list: false
                default: true
                }
            }
            array(values, inline: inline) { $0.fieldValue($1) }
        }
    }

    // MARK: Structure, as JSONWriter lays it out

    mutating func newline(_ indent: Int) {
        out.append(0x0A)
        out.append(contentsOf: repeatElement(0x20, count: indent))
    }

    mutating func beginObject() {
        out.append(UInt8(ascii: "{"))
        hasMember.append(false)
        indent += 2
    }

    mutating func emptyObject() { scalar(Array("{}".utf8)) }

    /// Writes a member's key; an object is open and has at least one member by its end.
    mutating func key(_ k: String) {
        if hasMember[hasMember.count - 1] { out.append(UInt8(ascii: ",")) }
        hasMember[hasMember.count - 1] = true
        if pretty { newline(indent) }
        JSONWriter.writeString(k, into: &out)
        out.append(UInt8(ascii: ":"))
        if pretty { out.append(0x20) }
    }

    mutating func endObject() {
        indent -= 2
        hasMember.removeLast()
        if pretty { newline(indent) }
        out.append(UInt8(ascii: "}"))
    }

    /// An array: `[]` when empty, else each item after its separator.
    mutating func array<T>(_ items: [T], inline: Bool, _ writeItem: (inout RecordWriter, T) -> Void) {
        guard !items.isEmpty else { scalar(Array("[]".utf8)); return }
        beginArray()
        for item in items {
            element(inline: inline)
            writeItem(&self, item)
        }
        endArray(inline: inline)
    }

    mutating func beginArray() {
        out.append(UInt8(ascii: "["))
        hasMember.append(false)
        indent += 2
    }

    mutating func element(inline: Bool) {
        if hasMember[hasMember.count - 1] {
            out.append(UInt8(ascii: ","))
            if inline && pretty { out.append(0x20) }
        }
        hasMember[hasMember.count - 1] = true
        if !inline && pretty { newline(indent) }
    }

    mutating func endArray(inline: Bool) {
        indent -= 2
        hasMember.removeLast()
        if !inline && pretty { newline(indent) }
        out.append(UInt8(ascii: "]"))
    }

    mutating func scalar(_ bytes: [UInt8]) { out.append(contentsOf: bytes) }
    mutating func string(_ s: String) { JSONWriter.writeString(s, into: &out) }
    mutating func int(_ i: Int64) { out.append(contentsOf: String(i).utf8) }
    mutating func double(_ d: Double) { out.append(contentsOf: JSONWriter.formatDouble(d).utf8) }
}
