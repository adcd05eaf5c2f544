import CloudStore

/// A record by name alone, whatever its type: what a change to the zone names.
struct RecordRef: Hashable, Sendable {
    var database: DatabaseKey
    var zone: String
    var name: String
}

/// What the view shows of a record: its file's text and the attributes that come from it.
struct RenderedRecord: Sendable {
    var type: String
    var tag: String
    var bytes: [UInt8]
    /// The modification time in ms, when the record has one.
    var modified: Int64?
    /// The creator's user record name, when the record has one.
    var creator: String?

    init(_ record: Record) {
        type = record.recordType
        tag = record.recordChangeTag ?? ""
        bytes = RecordCoding.fileBytes(record)
        modified = record.modified?.timestamp
        creator = record.created?.userRecordName
    }
}
