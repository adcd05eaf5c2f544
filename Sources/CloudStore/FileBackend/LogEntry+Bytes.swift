/// A log entry's bytes, written by the same writer as record files so that a record reads
/// the same in the log as in its file.
extension RecordWriter {
    /// A log entry's body, compact: the bytes the CRC covers.
    static func entryBody(_ e: LogEntry) -> [UInt8] {
        var w = RecordWriter(pretty: false, capacity: 256 + 512 * e.saved.count)
        w.beginObject()
        if let t = e.clientChangeToken { w.key("clientChangeToken"); w.string(t.base64EncodedString()) }
        w.key("deleted")
        w.array(e.deleted, inline: true) { w, d in
            w.beginObject()
            if d.cascade { w.key("cascade"); w.scalar(Array("true".utf8)) }
            w.key("recordName"); w.string(d.recordName)
            if let type = d.recordType { w.key("recordType"); w.string(type) }
            if let root = d.root { w.key("root"); w.string(root) }
            w.endObject()
        }
        w.key("device"); w.string(e.deviceID)
        w.key("saved")
        w.array(e.saved, inline: true) { $0.record($1) }
        w.key("seq"); w.int(e.seq)
        w.key("time"); w.int(e.time)
        w.key("usage"); w.int(e.usage)
        w.key("user"); w.string(e.userRecordName)
        w.endObject()
        return w.out
    }
}
