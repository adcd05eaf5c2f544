import CloudKit
import Testing
import TestSupport

/// Queries as CloudKit code writes them, with `import CloudKit` alone: `NSPredicate(format:)`
/// with `%@`, `%d` and `%K`, `NSPredicate(value:)`, compound predicates, `NSSortDescriptor`,
/// and the cursor loop that pages through every result.
@Suite struct PredicateQueryTests {
    static func seed(_ db: CKDatabase) async throws -> [CKRecord] {
        let owner = CKRecord(recordType: "Person", recordID: CKRecord.ID(recordName: "ana"))
        _ = try await db.save(owner)
        var saved: [CKRecord] = []
        for i in 0..<12 {
            let task = CKRecord(recordType: "Task", recordID: CKRecord.ID(recordName: String(format: "t%02d", i)))
            task["title"] = (i % 2 == 0 ? "Buy " : "Call ") + "item \(i)"
            task["priority"] = i % 4
            task["due"] = Date(timeIntervalSince1970: 1_800_000_000 + Double(i) * 86_400)
            task["tags"] = i % 3 == 0 ? ["home", "urgent"] : ["work"]
            task["owner"] = CKRecord.Reference(recordID: owner.recordID, action: .none)
            saved.append(try await db.save(task))
        }
        return saved
    }

    /// Every record of a query, page by page through cursors, as sync code pages.
    static func all(_ query: CKQuery, in db: CKDatabase, pageSize: Int) async throws -> [CKRecord] {
        var records: [CKRecord] = []
        var cursor: CKQueryOperation.Cursor?
        var first = true
        while first || cursor != nil {
            first = false
            let operation = cursor.map { CKQueryOperation(cursor: $0) } ?? CKQueryOperation(query: query)
            operation.resultsLimit = pageSize
            let page = LockedList<CKRecord>()
            operation.recordMatchedBlock = { _, result in if case .success(let r) = result { page.append(r) } }
            cursor = try await withCheckedThrowingContinuation { c in
                operation.queryResultBlock = { c.resume(with: $0) }
                db.add(operation)
            }
            records += page.items
        }
        return records
    }

    @Test func predicatesAndSortDescriptorsAsCloudKitCodeWritesThem() async throws {
        let db = try ImportCloudKitTests.container().privateCloudDatabase
        let saved = try await Self.seed(db)
        func names(_ predicate: NSPredicate, sort: [NSSortDescriptor] = [NSSortDescriptor(key: "title", ascending: true)]) async throws -> [String] {
            let query = CKQuery(recordType: "Task", predicate: predicate)
            query.sortDescriptors = sort
            return try await Self.all(query, in: db, pageSize: 5).map(\.recordID.recordName)
        }
        func expected(_ keep: (CKRecord) -> Bool) -> [String] {
            saved.filter(keep).sorted { ($0["title"] as? String ?? "") < ($1["title"] as? String ?? "") }.map(\.recordID.recordName)
        }
        let cutoff = Date(timeIntervalSince1970: 1_800_000_000 + 5 * 86_400)
        let ana = CKRecord.Reference(recordID: CKRecord.ID(recordName: "ana"), action: .none)

        #expect(try await names(NSPredicate(value: true)) == expected { _ in true })
        #expect(try await names(NSPredicate(format: "title BEGINSWITH %@", "Buy")) == expected { ($0["title"] as? String)?.hasPrefix("Buy") == true })
        #expect(try await names(NSPredicate(format: "priority >= %d AND priority < %ld", 2, 3)) == expected { $0["priority"] as? Int == 2 })
        #expect(try await names(NSPredicate(format: "%K > %@", "due", cutoff as NSDate)) == expected { ($0["due"] as? Date)! > cutoff })
        #expect(try await names(NSPredicate(format: "tags CONTAINS %@", "urgent")) == expected { ($0["tags"] as? [String])!.contains("urgent") })
        #expect(try await names(NSPredicate(format: "priority IN %@", [0, 3])) == expected { [0, 3].contains($0["priority"] as? Int) })
        #expect(try await names(NSPredicate(format: "owner == %@", ana)).count == 12)
        #expect(try await names(NSPredicate(format: "title == %@", argumentArray: ["Call item 7"])) == ["t07"])
        let both = NSCompoundPredicate(andPredicateWithSubpredicates: [NSPredicate(format: "priority == 0"), NSPredicate(format: "title BEGINSWITH 'Buy'")])
        #expect(try await names(both) == expected { $0["priority"] as? Int == 0 && ($0["title"] as? String)!.hasPrefix("Buy") })

        // Sorted by two keys, one descending, paged through cursors without repeats or gaps.
        let sorted = try await names(NSPredicate(value: true),
                                     sort: [NSSortDescriptor(key: "priority", ascending: false), NSSortDescriptor(key: "due", ascending: true)])
        let want = saved.sorted {
            let (a, b) = ($0["priority"] as? Int ?? 0, $1["priority"] as? Int ?? 0)
            return a != b ? a > b : ($0["due"] as? Date)! < ($1["due"] as? Date)!
        }.map(\.recordID.recordName)
        #expect(sorted == want)
    }

    /// What CloudKit refuses is refused with a clear `invalidArguments`, not a crash.
    @Test func predicatesCloudKitRefusesFailTheQueryWithAReason() async throws {
        let db = try ImportCloudKitTests.container().privateCloudDatabase
        _ = try await Self.seed(db)
        let refused: [(NSPredicate, String)] = [
            (NSPredicate(format: "title MATCHES %@", ".*"), "MATCHES"),
            (NSCompoundPredicate(orPredicateWithSubpredicates: [NSPredicate(format: "priority == 1"), NSPredicate(format: "priority == 2")]), "OR"),
            (NSPredicate(value: false), "FALSEPREDICATE"),
            (NSPredicate(format: "title == %@", URL(fileURLWithPath: "/x")), "argument 1"),
        ]
        for (predicate, words) in refused {
            do {
                _ = try await db.records(matching: CKQuery(recordType: "Task", predicate: predicate))
                Issue.record("\(predicate) was accepted")
            } catch let error as CKError {
                #expect(error.code == .invalidArguments, "\(predicate)")
                #expect(error.localizedDescription.contains(words), "\(error.localizedDescription)")
            }
        }
    }

    /// A query subscription takes an NSPredicate too; one that does not parse fails its save.
    @Test func querySubscriptionsTakeAnNSPredicate() async throws {
        let db = try ImportCloudKitTests.container().privateCloudDatabase
        let urgent = CKQuerySubscription(recordType: "Task", predicate: NSPredicate(format: "priority == %d", 3),
                                         subscriptionID: "urgent", options: [.firesOnRecordCreation])
        let saved = try await db.save(urgent)
        #expect(saved.subscriptionID == "urgent")
        let broken = CKQuerySubscription(recordType: "Task", predicate: NSPredicate(format: "title LIKE %@", "x*"),
                                         subscriptionID: "broken", options: [.firesOnRecordCreation])
        var code: CKError.Code?
        do { _ = try await db.save(broken) } catch let error as CKError { code = error.code }
        #expect(code == .invalidArguments)
    }
}
