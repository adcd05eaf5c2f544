import CloudKit
import Foundation
import Testing
import TestSupport

/// A file that imports CloudKit and then Foundation, as many CloudKit files do: `NSPredicate`,
/// `NSCompoundPredicate` and `NSSortDescriptor` are Foundation's types, in type annotations too,
/// and their format and key initializers make CloudKit's predicates and sorts.
/// (`FoundationThenCloudKitTests` imports them the other way round.)
@Suite struct FoundationAndCloudKitTests {
    @Test func predicatesAndSortsAreFoundationsTypes() async throws {
        let db = try ImportCloudKitTests.container().privateCloudDatabase
        for i in 0..<4 {
            let record = CKRecord(recordType: "Task", recordID: CKRecord.ID(recordName: "t\(i)"))
            record["priority"] = i
            _ = try await db.save(record)
        }
        let atLeastTwo: NSPredicate = NSPredicate(format: "priority >= %d", 2)
        let byPriority: [NSSortDescriptor] = [NSSortDescriptor(key: "priority", ascending: false)]
        let query = CKQuery(recordType: "Task", predicate: atLeastTwo)
        query.sortDescriptors = byPriority
        let (results, _) = try await db.records(matching: query)
        #expect(results.map(\.0.recordName) == ["t3", "t2"])
        let everything: NSPredicate = NSPredicate(value: true)
        #expect(try await db.records(matching: CKQuery(recordType: "Task", predicate: everything)).matchResults.count == 4)
        let notThree: NSCompoundPredicate = NSCompoundPredicate(andPredicateWithSubpredicates: [
            atLeastTwo, NSCompoundPredicate(notPredicateWithSubpredicate: NSPredicate(format: "priority == 3")),
        ])
        #expect(try await db.records(matching: CKQuery(recordType: "Task", predicate: notThree)).matchResults.map(\.0.recordName) == ["t2"])
        let restored = try NSKeyedUnarchiver.unarchivedObject(ofClass: CKQuery.self, from: NSKeyedArchiver.archivedData(withRootObject: query, requiringSecureCoding: true))
        #expect(restored?.predicate == query.predicate && restored?.sortDescriptors == query.sortDescriptors)
        // A predicate matches a record as Apple's does.
        let fetched = try await db.record(for: CKRecord.ID(recordName: "t3"))
        #expect(atLeastTwo.evaluate(with: fetched))
    }
}
