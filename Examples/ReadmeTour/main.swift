// README.md's Swift example as it stands there (scripts/doc-harness/swift-example checks that
// the README's block is this text, and runs this program in an empty folder), then checks of
// what the README says it does.
import CloudKit
import CloudStore                              // ckfs's engine: Store

let store = try Store.create(at: "store")
let container = try CKContainer(store: store, user: "mei")
let db = container.privateCloudDatabase
let artist = CKRecord(recordType: "Artist", recordID: CKRecord.ID(recordName: "mei"))
artist["name"] = "Mei Chen"
let saved = try await db.save(artist)          // saved.recordChangeTag == "1"
let query = CKQuery(recordType: "Artist", predicate: NSPredicate(format: "name BEGINSWITH %@", "Mei"))
let (matches, _) = try await db.records(matching: query)

let kv = try NSUbiquitousKeyValueStore(store: store, user: "mei")
kv.set(42, forKey: "page")
kv.synchronize()                               // durable; takes in others' writes

guard saved.recordChangeTag == "1", matches.count == 1, (try? matches[0].1.get())?["name"] as? String == "Mei Chen",
      kv.longLong(forKey: "page") == 42 else {
    print("README's example did not do what it says: tag \(saved.recordChangeTag ?? "none"), \(matches.count) matches")
    exit(1)
}
print("README's example ran: record saved at tag 1, found by its query; key-value page = 42")
