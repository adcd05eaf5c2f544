import CloudKit
import CloudStore
import Testing
import TestSupport

/// What sync code keeps between launches, archived with `NSKeyedArchiver` as Apple's classes
/// are: record and zone IDs (pending deletions, known zones), zones and a query cursor (paging
/// on after a restart), read back with `NSKeyedUnarchiver` under secure coding.
@Suite struct ArchivingTests {
    static func roundTrip<T: NSObject & NSSecureCoding>(_ object: T) throws -> T {
        let data = try NSKeyedArchiver.archivedData(withRootObject: object, requiringSecureCoding: true)
        return try #require(try NSKeyedUnarchiver.unarchivedObject(ofClass: T.self, from: data))
    }

    /// A reference is an object, as Apple's: archived and read back equal, with its action;
    /// two made alike are equal and hash alike, so they find each other in sets.
    @Test func referencesArchiveAsObjects() throws {
        let zone = CKRecordZone.ID(zoneName: "Notes", ownerName: CKCurrentUserDefaultName)
        let reference = CKRecord.Reference(recordID: CKRecord.ID(recordName: "folder-1", zoneID: zone), action: .deleteSelf)
        let back = try Self.roundTrip(reference)
        #expect(back == reference && back.action == .deleteSelf && back.recordID.zoneID == zone && back !== reference)
        let plain = CKRecord.Reference(recordID: reference.recordID, action: .none)
        #expect(plain != reference)
        #expect(Set([reference, plain, back]).count == 2)
    }

    @Test func idsArchiveAndFindTheirEntriesAgain() throws {
        let zone = CKRecordZone.ID(zoneName: "Notes", ownerName: CKCurrentUserDefaultName)
        let id = CKRecord.ID(recordName: "note-1", zoneID: zone)
        let zoneBack = try Self.roundTrip(zone)
        let idBack = try Self.roundTrip(id)
        #expect(zoneBack == zone && zoneBack.zoneName == "Notes" && zoneBack.ownerName == CKCurrentUserDefaultName)
        #expect(idBack == id && idBack.hashValue == id.hashValue && idBack.zoneID == zone && idBack.recordName == "note-1")
        #expect(idBack !== id, "a new object, equal to the one archived")

        // Pending deletions, kept as one archived array and looked up by ID after the relaunch.
        let pending = [id, CKRecord.ID(recordName: "note-2", zoneID: zone), CKRecord.ID(recordName: "note-1")]
        let data = try NSKeyedArchiver.archivedData(withRootObject: NSArray(array: pending), requiringSecureCoding: true)
        let back = try #require(try NSKeyedUnarchiver.unarchivedObject(ofClasses: [NSArray.self, CKRecord.ID.self, CKRecordZone.ID.self], from: data) as? [CKRecord.ID])
        #expect(back == pending)
        let position = Dictionary(uniqueKeysWithValues: pending.enumerated().map { ($1, $0) })
        #expect(back.map { position[$0] } == [0, 1, 2])

        #expect(CKRecord.ID(recordName: "note-1") != id, "the same name in another zone is another record")
        #expect(CKRecordZone.ID(zoneName: "Notes", ownerName: "_someoneElse") != zone)
        #expect(CKRecordZone.ID.default == CKRecordZone.ID(zoneName: CKRecordZone.ID.defaultZoneName, ownerName: CKCurrentUserDefaultName))
        #expect(CKRecordZone.ID.defaultZoneName == "_defaultZone")
    }

    /// An app pages through a query, keeps the cursor when it is stopped, and pages on from the
    /// archived cursor in a new launch: every record comes once, in order, including one saved
    /// between the launches.
    @Test func aCursorArchivesAndPagesOnAfterARelaunch() async throws {
        let path = TemporaryStores.path("ckfs-archive-")
        let zoneID = CKRecordZone.ID(zoneName: "Trips")
        let first = try CKContainer(store: Store.create(at: path), user: "mei").privateCloudDatabase
        let zone = try await first.save(CKRecordZone(zoneID: zoneID))
        let zoneBack = try Self.roundTrip(zone)
        #expect(zoneBack == zone && zoneBack.zoneID == zoneID && zoneBack.capabilities.contains([.fetchChanges, .atomic]))
        for i in 0..<11 {
            let stop = CKRecord(recordType: "Stop", recordID: CKRecord.ID(recordName: String(format: "s%02d", i), zoneID: zoneID))
            stop["title"] = "Stop \"\(i)\" on the way"
            stop["day"] = Date(timeIntervalSince1970: 1_800_000_000 + Double(i % 4) * 86_400)
            stop["rank"] = i % 3
            _ = try await first.save(stop)
        }
        let query = CKQuery(recordType: "Stop", predicate: NSPredicate(format: "rank < %d AND title BEGINSWITH %@ AND day >= %@", 2, "Stop \"",
                                                                      Date(timeIntervalSince1970: 1_800_000_000) as NSDate))
        query.sortDescriptors = [NSSortDescriptor(key: "day", ascending: false)]
        let page = try await first.records(matching: query, inZoneWith: zoneID, resultsLimit: 3)
        let cursor = try #require(page.queryCursor)
        let archived = try NSKeyedArchiver.archivedData(withRootObject: cursor, requiringSecureCoding: true)

        // The next launch: a new container on the same store, and one more matching record.
        let second = try CKContainer(store: Store.open(at: path), user: "mei").privateCloudDatabase
        let late = CKRecord(recordType: "Stop", recordID: CKRecord.ID(recordName: "s99", zoneID: zoneID))
        late["title"] = "Stop \"late\""
        late["day"] = Date(timeIntervalSince1970: 1_800_000_000)
        late["rank"] = 0
        _ = try await second.save(late)
        let restored = try #require(try NSKeyedUnarchiver.unarchivedObject(ofClass: CKQueryOperation.Cursor.self, from: archived))
        #expect(restored == cursor && restored !== cursor)
        var names = page.matchResults.map(\.0.recordName)
        var next: CKQueryOperation.Cursor? = restored
        while let at = next {
            let more = try await second.records(continuingMatchFrom: at, resultsLimit: 3)
            names += more.matchResults.map(\.0.recordName)
            next = more.queryCursor
        }
        // Day descending, then name: the order CloudKit's cursor keeps.
        var matching: [(day: Int, name: String)] = [(day: 0, name: "s99")]
        for i in 0..<11 where i % 3 < 2 { matching.append((day: i % 4, name: String(format: "s%02d", i))) }
        let expected = matching.sorted { $0.day != $1.day ? $0.day > $1.day : $0.name < $1.name }.map(\.name)
        #expect(names == expected)
    }

    /// Filters built in code: an empty AND matches everything and its cursor archives; a key
    /// that is no field name and a number CloudKit cannot compare are refused when the query runs.
    @Test func builtPredicatesArchiveOrAreRefused() async throws {
        let db = try ImportCloudKitTests.container().privateCloudDatabase
        for i in 0..<4 {
            let note = CKRecord(recordType: "Note", recordID: CKRecord.ID(recordName: "n\(i)"))
            note["rank"] = i
            _ = try await db.save(note)
        }
        let everything = CKQuery(recordType: "Note", predicate: NSCompoundPredicate(andPredicateWithSubpredicates: []))
        everything.sortDescriptors = [NSSortDescriptor(key: "rank", ascending: true)]
        let page = try await db.records(matching: everything, resultsLimit: 2)
        let restored = try Self.roundTrip(try #require(page.queryCursor))
        let rest = try await db.records(continuingMatchFrom: restored)
        #expect((page.matchResults + rest.matchResults).map(\.0.recordName) == ["n0", "n1", "n2", "n3"])

        for predicate in [NSPredicate(format: "%K == %@", "my-field", "x"), NSPredicate(format: "rank > %@", Double.nan)] {
            var code: CKError.Code?
            do { _ = try await db.records(matching: CKQuery(recordType: "Note", predicate: predicate)) } catch let error as CKError { code = error.code }
            #expect(code == .invalidArguments, "\(predicate)")
        }
    }

    /// A distance-sorted query's cursor keeps its point through the archive.
    @Test func aDistanceCursorKeepsItsPoint() async throws {
        let db = try ImportCloudKitTests.container().privateCloudDatabase
        for (i, (lat, lon)) in [(48.85, 2.35), (51.51, -0.13), (52.52, 13.40), (41.90, 12.50), (40.42, -3.70)].enumerated() {
            let city = CKRecord(recordType: "City", recordID: CKRecord.ID(recordName: "c\(i)"))
            city["at"] = Location(latitude: lat, longitude: lon)
            _ = try await db.save(city)
        }
        let query = CKQuery(recordType: "City", predicate: NSPredicate(value: true))
        query.sortDescriptors = [CKLocationSortDescriptor(key: "at", relativeLocation: Location(latitude: 50.11, longitude: 8.68))]
        let page = try await db.records(matching: query, resultsLimit: 2)
        let cursor = try #require(page.queryCursor)
        let restored = try Self.roundTrip(cursor)
        #expect(restored == cursor)
        let rest = try await db.records(continuingMatchFrom: restored, resultsLimit: 10)
        // From Frankfurt: Paris 479 km, Berlin 424 km, London 636 km, Rome 959 km, Madrid 1,420 km.
        #expect(page.matchResults.map(\.0.recordName) + rest.matchResults.map(\.0.recordName) == ["c2", "c0", "c1", "c3", "c4"])
    }
    /// An app that caches whole records archives them; the copy read back has every field
    /// and saves as the same version (and a stale one is refused as CloudKit refuses it).
    @Test func aWholeRecordArchivesAndSavesAsTheSameVersion() async throws {
        let db = try ImportCloudKitTests.container().privateCloudDatabase
        let note = CKRecord(recordType: "Note", recordID: CKRecord.ID(recordName: "n1"))
        note.setValuesForKeys(["title": "Groceries", "count": 3, "tags": ["home", "weekly"], "ignored": NSObject()])
        note["due"] = Date(timeIntervalSince1970: 1_800_000_000)
        note["place"] = Location(latitude: 48.85, longitude: 2.35)
        let saved = try await db.save(note)

        let data = try NSKeyedArchiver.archivedData(withRootObject: saved, requiringSecureCoding: true)
        let cached = try #require(try NSKeyedUnarchiver.unarchivedObject(ofClass: CKRecord.self, from: data))
        #expect(cached !== saved && cached.recordID == saved.recordID && cached.recordChangeTag == saved.recordChangeTag)
        #expect(cached["title"] as? String == "Groceries" && cached["count"] as? Int == 3 && cached["tags"] as? [String] == ["home", "weekly"])
        #expect(cached["due"] as? Date == Date(timeIntervalSince1970: 1_800_000_000))
        #expect((cached["place"] as? CLLocation)?.coordinate.latitude == 48.85)
        #expect(Set(cached.allKeys()) == ["title", "count", "tags", "due", "place"], "a value that is not a record value is not set")

        cached.setValuesForKeys(["count": 4, "tags": NSNull()])
        // What JSONSerialization gives: NSNumber, NSString and NSArray inside Any.
        let parsed = try #require(try JSONSerialization.jsonObject(with: Data(#"{"score": 2.5, "label": "x", "sizes": [1, 2]}"#.utf8)) as? [String: Any])
        let scratch = CKRecord(recordType: "Note")
        scratch.setValuesForKeys(parsed.merging(["small": Int32(7), "ratio": Float(0.5)]) { a, _ in a })
        #expect(scratch["score"] as? Double == 2.5 && scratch["label"] as? String == "x" && scratch["sizes"] as? [Int] == [1, 2])
        #expect(scratch["small"] as? Int == 7 && scratch["ratio"] as? Double == 0.5)
        let again = try await db.save(cached)
        #expect(again["count"] as? Int == 4 && again["tags"] == nil)

        // The archive made before that save is now stale.
        let stale = try #require(try NSKeyedUnarchiver.unarchivedObject(ofClass: CKRecord.self, from: data))
        stale["count"] = 5
        var code: CKError.Code?
        do { _ = try await db.save(stale) } catch let error as CKError { code = error.code }
        #expect(code == .serverRecordChanged)

        // Edits not yet saved survive the archive: a save of only the changed keys sends them,
        // and a field removed before archiving stays removed.
        let edited = try await db.record(for: again.recordID)
        edited["title"] = "Groceries and more"
        edited["place"] = nil
        let editedData = try NSKeyedArchiver.archivedData(withRootObject: edited, requiringSecureCoding: true)
        let restored = try #require(try NSKeyedUnarchiver.unarchivedObject(ofClass: CKRecord.self, from: editedData))
        #expect(Set(restored.changedKeys()) == ["title", "place"])
        let modify = try await db.modifyRecords(saving: [restored], deleting: [], savePolicy: .changedKeys)
        let stored = try modify.saveResults[restored.recordID]?.get()
        #expect(stored?["title"] as? String == "Groceries and more" && stored?["place"] == nil && stored?["count"] as? Int == 4)

        // A copy is a record of its own.
        let copy = try #require(again.copy() as? CKRecord)
        copy["title"] = "Changed"
        #expect(again["title"] as? String == "Groceries" && copy["title"] as? String == "Changed")
    }
}
