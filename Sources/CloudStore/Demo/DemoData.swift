import Foundation

/// A small container to look at: records of a few types with every field type, in the
/// public database and in a custom zone of the caller's private database, and a few
/// key-value entries of the caller.
package enum DemoData {
    /// Fills the default container (once: a second call finds the records and stops).
    public static func fill(_ store: Store, caller: Caller) throws(CKError) {
        let container = try store.container()
        let pub = try container.database(.public, caller: caller)
        let priv = try container.database(.private, caller: caller)
        if (try? pub.record(for: RecordID(recordName: "welcome", zoneID: pub.zoneID(ZoneID.defaultZoneName)))) != nil { return }
        _ = try? priv.createZone("Notes")
        let day: Int64 = 86_400_000
        let now = Int64(Date().timeIntervalSince1970 * 1000) / 1000 * 1000
        func record(_ type: String, _ name: String, in db: Database, zone: String, _ fields: [String: FieldValue]) -> Record {
            Record(recordType: type, recordID: RecordID(recordName: name, zoneID: db.zoneID(zone)), fields: fields)
        }
        let publicRecords = [
            record("Note", "welcome", in: pub, zone: ZoneID.defaultZoneName, [
                "title": .string("Welcome to ckfs"),
                "body": .string("Every record is a JSON file. Edit it with vim, sed or a shell redirect; the save happens when the file is closed."),
                "stars": .int64(5),
                "rating": .double(4.5),
                "published": .timestamp(milliseconds: now - day),
                "tags": .list(.string, [.string("intro"), .string("demo")]),
            ]),
            record("Place", "lighthouse", in: pub, zone: ZoneID.defaultZoneName, [
                "name": .string("Old lighthouse"),
                "where": .location(Location(latitude: 59.4370, longitude: 24.7536, altitude: 12)),
                "visitors": .list(.int64, [.int64(120), .int64(98), .int64(143)]),
                "thumbnail": .bytes(Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])),
            ]),
        ]
        let privateRecords = [
            record("Note", "groceries", in: priv, zone: "Notes", [
                "title": .string("Groceries"),
                "body": .string("milk, bread, apples"),
                "due": .timestamp(milliseconds: now + day),
                "done": .int64(0),
            ]),
            record("Task", "call-mum", in: priv, zone: "Notes", [
                "title": .string("Call mum"),
                "note": .reference(Reference(recordName: "groceries", action: .deleteSelf)),
                "priority": .double(0.8),
                "checkpoints": .list(.timestamp, [.timestamp(milliseconds: now), .timestamp(milliseconds: now + day)]),
            ]),
        ]
        for (db, records) in [(pub, publicRecords), (priv, privateRecords)] {
            let result = try db.modify(saving: records)
            if let e = result.error { throw e }
        }
        try container.keyValueStorage(user: caller.userName).update { (entries: inout KeyValueEntries) throws(CKError) in
            try entries.set(.string("dark"), forKey: "theme")
            try entries.set(.integer(14), forKey: "fontSize")
            try entries.set(.date(Date(timeIntervalSince1970: Double(now / 1000))), forKey: "lastOpened")
            try entries.set(.array([.string("welcome"), .string("groceries")]), forKey: "recent")
        }
    }
}
