import CloudKit
import Testing
import TestSupport

/// `encryptedValues` as CloudKit code uses it, with `import CloudKit` alone: the contact of
/// Apple's encryption sample (`contactRecord.encryptedValues["phoneNumber"] = phoneNumber`,
/// read back with `as? String`), the generic subscript, archiving, and what CloudKit refuses.
@Suite struct EncryptedValuesTests {
    /// Sets a value only when it differs, as sync code writes it with the generic subscript.
    static func set<T: CKRecordValueProtocol & Equatable>(_ newValue: T, _ key: CKRecord.FieldKey, on record: CKRecord) {
        guard record.encryptedValues[key] != newValue else { return }
        record.encryptedValues[key] = newValue
    }

    @Test func aContactsPhoneNumberIsSavedEncryptedAndReadBack() async throws {
        let database = try ImportCloudKitTests.container().privateCloudDatabase
        let zone = CKRecordZone(zoneName: "Contacts")
        _ = try await database.modifyRecordZones(saving: [zone], deleting: [])
        let id = CKRecord.ID(recordName: "ada", zoneID: zone.zoneID)
        let contactRecord = CKRecord(recordType: "Contact", recordID: id)
        contactRecord["name"] = "Ada"
        contactRecord.encryptedValues["phoneNumber"] = "+33 1 23 45 67 89"
        // The two kinds of field are kept apart, as on Apple's platforms.
        #expect(contactRecord.encryptedValues.changedKeys() == ["phoneNumber"] && contactRecord.changedKeys() == ["name"])
        #expect(contactRecord["phoneNumber"] == nil && contactRecord.encryptedValues["name"] == nil)
        _ = try await database.save(contactRecord)

        let fetched = try await database.record(for: id)
        let phoneNumber = fetched.encryptedValues["phoneNumber"] as? String
        let typed: String? = fetched.encryptedValues["phoneNumber"]
        #expect(phoneNumber == "+33 1 23 45 67 89" && typed == phoneNumber)
        #expect(fetched.encryptedValues.allKeys() == ["phoneNumber"] && fetched.allKeys() == ["name"])
        #expect(fetched["phoneNumber"] == nil)
        #expect(fetched.encryptedValues.object(forKey: "phoneNumber") as? String == phoneNumber)

        Self.set("+1 555 0100", "phoneNumber", on: fetched)
        fetched.encryptedValues["photo"] = Data([1, 2, 3])
        fetched.encryptedValues.setObject([3, 1, 2], forKey: "ranks")
        #expect(fetched.encryptedValues.changedKeys() == ["phoneNumber", "photo", "ranks"])
        let updated = try await database.save(fetched)
        #expect(updated.encryptedValues["phoneNumber"] as? String == "+1 555 0100")
        #expect(updated.encryptedValues["photo"] as? Data == Data([1, 2, 3]))
        let ranks: [Int]? = updated.encryptedValues["ranks"]
        #expect(ranks == [3, 1, 2])

        // Archived with the record, as sync code keeps records between launches.
        let archive = try NSKeyedArchiver.archivedData(withRootObject: updated, requiringSecureCoding: true)
        let restored = try #require(try NSKeyedUnarchiver.unarchivedObject(ofClass: CKRecord.self, from: archive))
        #expect(restored.encryptedValues["phoneNumber"] as? String == "+1 555 0100" && restored["phoneNumber"] == nil)

        // Removed through encryptedValues, as any field is.
        restored.encryptedValues["photo"] = nil
        let trimmed = try await database.save(restored)
        #expect(trimmed.encryptedValues.allKeys() == ["phoneNumber", "ranks"])
    }

    /// "Don't include encrypted fields in your predicate or sort descriptors", and no
    /// encryption in the public database: both fail with `invalidArguments`.
    @Test func queriesAndThePublicDatabaseRefuseEncryptedFields() async throws {
        let container = try ImportCloudKitTests.container()
        let contact = CKRecord(recordType: "Contact", recordID: CKRecord.ID(recordName: "grace"))
        contact["name"] = "Grace"
        contact.encryptedValues["phoneNumber"] = "+44 20 7946 0000"
        _ = try await container.privateCloudDatabase.save(contact)

        let byPhone = CKQuery(recordType: "Contact", predicate: NSPredicate(format: "phoneNumber == %@", "+44 20 7946 0000"))
        let sorted = CKQuery(recordType: "Contact", predicate: NSPredicate(value: true))
        sorted.sortDescriptors = [NSSortDescriptor(key: "phoneNumber", ascending: true)]
        for query in [byPhone, sorted] {
            do {
                _ = try await container.privateCloudDatabase.records(matching: query)
                Issue.record("a query on an encrypted field was answered")
            } catch let error as CKError {
                #expect(error.code == .invalidArguments && error.localizedDescription.contains("phoneNumber"), "\(error.localizedDescription)")
            }
        }
        let byName = try await container.privateCloudDatabase.records(matching: CKQuery(recordType: "Contact", predicate: NSPredicate(format: "name == %@", "Grace")))
        #expect(byName.matchResults.count == 1)

        let shared = CKRecord(recordType: "Contact")
        shared.encryptedValues["phoneNumber"] = "+44 20 7946 0001"
        do {
            _ = try await container.publicCloudDatabase.save(shared)
            Issue.record("the public database kept an encrypted field")
        } catch let error as CKError {
            #expect(error.code == .invalidArguments && error.localizedDescription.contains("public database"), "\(error.localizedDescription)")
        }
    }
}
