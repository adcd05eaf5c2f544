import CloudKit
import Foundation
import Testing

/// A file that imports Foundation beside CloudKit, as many CloudKit files do: predicates and
/// sort descriptors written as expressions are CloudKit's, and a type annotation names
/// `CloudKit.NSPredicate` (Foundation's own has no format strings on Linux).
@Suite struct FoundationAndCloudKitTests {
    @Test func predicateExpressionsAreCloudKitsBesideFoundation() async throws {
        let db = try ImportCloudKitTests.container().privateCloudDatabase
        for i in 0..<4 {
            let record = CKRecord(recordType: "Task", recordID: CKRecord.ID(recordName: "t\(i)"))
            record["priority"] = i
            _ = try await db.save(record)
        }
        let query = CKQuery(recordType: "Task", predicate: NSPredicate(format: "priority >= %d", 2))
        query.sortDescriptors = [NSSortDescriptor(key: "priority", ascending: false)]
        let (results, _) = try await db.records(matching: query)
        #expect(results.map(\.0.recordName) == ["t3", "t2"])
        let everything: CloudKit.NSPredicate = NSPredicate(value: true)
        #expect(try await db.records(matching: CKQuery(recordType: "Task", predicate: everything)).matchResults.count == 4)
    }
}
