import CloudStore

/// A record by name alone, whatever its type: what a change to the zone names.
struct RecordRef: Hashable, Sendable {
    var database: DatabaseKey
    var zone: String
    var name: String
}

/// What `stat` and an open need of a record, without its text: the view keeps these for
/// many more records than texts (``RenderCache/statsKept``).
struct RecordStat: Sendable {
    var type: String
    var tag: String
    /// The length of the file's text in bytes.
    var size: Int
    /// The modification time in ms, when the record has one.
    var modified: Int64?
    /// The creator's user record name, when the record has one.
    var creator: String?
}

/// What the view shows of a record: its file's text and the attributes that come from it.
struct RenderedRecord: Sendable {
    var stat: RecordStat
    var bytes: [UInt8]

    var type: String { stat.type }
    var tag: String { stat.tag }

    init(_ record: Record) {
        bytes = RecordCoding.fileBytes(record)
        stat = RecordStat(type: record.recordType, tag: record.recordChangeTag ?? "", size: bytes.count,
                          modified: record.modified?.timestamp, creator: record.created?.userRecordName)
    }
}
