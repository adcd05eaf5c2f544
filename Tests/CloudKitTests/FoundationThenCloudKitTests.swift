import Foundation
import CloudKit
import Testing
import TestSupport

/// A file that imports Foundation and then CloudKit: a helper that takes and returns
/// `NSPredicate` and `NSSortDescriptor`, as real code declares them, compiles and queries.
@Suite struct FoundationThenCloudKitTests {
    private func titles(startingWith prefix: String) -> NSPredicate { NSPredicate(format: "title BEGINSWITH %@", prefix) }
    private func newestFirst() -> [NSSortDescriptor] { [NSSortDescriptor(key: "rank", ascending: false)] }

    @available(*, deprecated, message: "reads predicateFormat, as apps do; Linux Foundation deprecates it")
    @Test func typeAnnotationsNameOneType() async throws {
        let db = try ImportCloudKitTests.container().privateCloudDatabase
        for (i, title) in ["Sea", "Seal", "Lake"].enumerated() {
            let record = CKRecord(recordType: "Note", recordID: CKRecord.ID(recordName: "n\(i)"))
            record["title"] = title
            record["rank"] = i
            _ = try await db.save(record)
        }
        let query = CKQuery(recordType: "Note", predicate: titles(startingWith: "Se"))
        query.sortDescriptors = newestFirst()
        let (found, _) = try await db.records(matching: query)
        #expect(found.map(\.0.recordName) == ["n1", "n0"])
        let subscription = CKQuerySubscription(recordType: "Note", predicate: titles(startingWith: "La"), options: [.firesOnRecordCreation])
        let predicate: NSPredicate = subscription.predicate
        #expect(predicate.predicateFormat == #"title BEGINSWITH "La""#)
    }
}
