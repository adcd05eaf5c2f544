import Foundation
import Synchronization
import Testing
import TestSupport
@testable import CloudStore
@testable import CloudKit

/// Identities, account status, ownership, permissions and discovery.
@Suite struct UserTests {
    func note(_ name: String, _ text: String, in db: Database, zone: String = ZoneID.defaultZoneName) -> Record {
        var r = Record(recordType: "Note", recordID: RecordID(recordName: name, zoneID: db.zoneID(zone)))
        r["text"] = .string(text)
        return r
    }

    func code(_ body: () throws -> Void) -> CKError.Code? {
        do { try body() } catch let e as CKError { return e.code } catch { return .internalError }
        return nil
    }

    /// Each status, and what each database and the key-value store allow in it.
    @Test func eachAccountStatusAllowsWhatItShould() throws {
        let t = try TempStore()
        let c = try t.store.container()
        try c.addUser("alice")
        try c.addUser("carol")
        try c.updateUser("carol", restricted: true)
        try c.setAutoEnrol(false)
        let alice = Caller(userName: "alice"), carol = Caller(userName: "carol")
        let nobody = Caller.noAccount(), stranger = Caller(userName: "stranger", uid: 4242)
        #expect(c.accountStatus(of: alice) == .available)
        #expect(c.accountStatus(of: carol) == .restricted)
        #expect(c.accountStatus(of: nobody) == .noAccount)
        #expect(c.accountStatus(of: stranger) == .noAccount, "auto-enrol is off, so an unknown uid has no account")

        let pub = try c.database(.public, caller: alice)
        try pub.save(note("hello", "public", in: pub))
        for caller in [carol, nobody, stranger] {
            // The public database reads...
            let db = try c.database(.public, caller: caller)
            #expect(try db.record(for: RecordID(recordName: "hello"))["text"] == .string("public"))
            // ...but does not write, and nothing else is open.
            #expect(code { try db.save(note("other", "x", in: db)) } == .notAuthenticated)
            #expect(code { try db.delete(RecordID(recordName: "hello")) } == .notAuthenticated)
            #expect(code { _ = try db.saveSubscription(Subscription(recordType: "Note", subscriptionID: "s", options: [.firesOnRecordCreation])) } == .notAuthenticated)
            #expect(code { _ = try c.database(.private, caller: caller) } == .notAuthenticated)
            #expect(code { _ = try c.keyValueStorage(caller: caller) } == .notAuthenticated)
            #expect(code { _ = try c.notificationLog(caller: caller) } == .notAuthenticated)
            #expect(code { _ = try CKContainer(store: t.store, caller: caller).userRecordID() } == .notAuthenticated)
        }
        #expect(try pub.record(for: RecordID(recordName: "hello"))["text"] == .string("public"), "nothing changed it")
        #expect((try? pub.record(for: RecordID(recordName: "other"))) == nil)
        #expect(try c.identities().map(\.name) == ["alice", "carol"], "nobody was enrolled")

        // Turned on, auto-enrolment makes the stranger a user, found by uid from then on.
        try c.setAutoEnrol(true)
        #expect(c.accountStatus(of: stranger) == .available)
        let id = try c.userRecordName(for: stranger)
        #expect(try c.userRecordName(for: Caller(userName: "renamed", uid: 4242)) == id, "the uid is the identity")
        #expect(try c.database(.private, caller: stranger).userRecordName == id)

        // Restricted while a database object lives (as a mount keeps them): its next write is
        // refused, though it was made before; reads go on.
        let longLived = try c.database(.public, caller: alice)
        try Store.open(at: t.path).container().updateUser("alice", restricted: true)
        #expect(code { try longLived.save(note("late", "x", in: longLived)) } == .notAuthenticated)
        #expect(try longLived.record(for: RecordID(recordName: "hello"))["text"] == .string("public"))
        try Store.open(at: t.path).container().updateUser("alice", restricted: false)
        try longLived.save(note("late", "x", in: longLived))

        // An unreadable container.json: status couldNotDetermine, and calls fail saying where.
        try Data("{ not json".utf8).write(to: URL(fileURLWithPath: t.store.layout.containerFile(c.identifier)))
        #expect(c.accountStatus(of: alice) == .couldNotDetermine)
        #expect(try CKContainer(store: t.store, caller: alice).accountStatusNow() == .couldNotDetermine)
    }

    /// Account status through the CloudKit API, and the default container and a bad identifier.
    @Test func containerAPIAccountStatusAndDefaultContainer() async throws {
        let t = try TempStore()
        try t.store.container().addUser("alice")
        let alice = try CKContainer(store: t.store, user: "alice")
        #expect(try await alice.accountStatus() == .available)
        #expect(try CKContainer(store: t.store, caller: .noAccount()).accountStatusNow() == .noAccount)
        let (status, error) = await withCheckedContinuation { cont in
            try! CKContainer(store: t.store, caller: .noAccount()).accountStatus { s, e in cont.resume(returning: (s, e)) }
        }
        #expect(status == .noAccount && error == nil)
        await #expect(throws: CKError.self) { _ = try await CKContainer(store: t.store, caller: .noAccount()).publicCloudDatabase.save(CKRecord(recordType: "Note")) }

        // CKContainer.default() and CKContainer(identifier:) open the store CKFS_STORE names
        // (given through Store.environmentForTests: a setenv here can crash other tests' spawns).
        Store.environmentForTests.withLock { $0 = ["CKFS_STORE": t.path] }
        defer { Store.environmentForTests.withLock { $0 = nil } }
        let d = CKContainer.default()
        #expect(d.containerIdentifier == StoreSettings().defaultContainer)
        // Code calls CKContainer.default() at each use: every call reads through one store
        // (its zone catalogs and caches), which reads zones from their index files.
        let store = try d.engine().store
        #expect(try CKContainer.default().engine().store === store && CKContainer(identifier: "iCloud.com.example.other").engine().store === store)
        #expect(store.reading == .server)
        #expect(d.accountStatusNow() == .available)
        let other = CKContainer(identifier: "iCloud.com.example.other")
        #expect(other.containerIdentifier == "iCloud.com.example.other")
        _ = try await other.privateCloudDatabase.save(CKRecord(recordType: "Note", recordID: CKRecord.ID(recordName: "n")))
        #expect(try t.store.containerIdentifiers().contains("iCloud.com.example.other"))
        let bad = CKContainer(identifier: "not a container id")
        #expect(bad.accountStatusNow() == .couldNotDetermine)
        #expect(throws: CKError.self) { _ = try bad.userRecordID() }
        Store.environmentForTests.withLock { $0 = ["CKFS_STORE": t.path + "/missing"] }
        #expect(CKContainer.default().accountStatusNow() == .couldNotDetermine)
    }

    /// Two identities, each with its own private database and key-value store.
    @Test func eachIdentitySeesOnlyItsOwnPrivateDataAndKeyValues() throws {
        let t = try TempStore()
        let a = try t.db(.private, user: "alice"), b = try t.db(.private, user: "bob")
        #expect(a.userRecordName != b.userRecordName)
        try a.createZone("Diary")
        try a.save(note("secret", "alice's", in: a, zone: "Diary"))
        try a.save(note("n", "alice's default", in: a))
        #expect(try b.zones().map(\.zoneID.zoneName) == [ZoneID.defaultZoneName])
        #expect(code { _ = try b.record(for: RecordID(recordName: "n")) } == .unknownItem)
        #expect(code { _ = try b.record(for: RecordID(recordName: "secret", zoneID: ZoneID(zoneName: "Diary", ownerName: a.userRecordName))) } == .zoneNotFound)
        #expect(try b.changes(since: nil).changed.isEmpty)

        let ka = try KeyValueStore(store: t.store, user: "alice", synchronizeEvery: nil)
        let kb = try KeyValueStore(store: t.store, user: "bob", synchronizeEvery: nil)
        ka.set("alice's", forKey: "k")
        try ka.sync()
        try kb.sync()
        #expect(kb.string(forKey: "k") == nil)
        #expect(ka.string(forKey: "k") == "alice's")
    }

    /// A public record is changed or deleted only by its creator or a write role.
    @Test func publicRecordsBelongToTheirCreatorOrAWriteRole() throws {
        let t = try TempStore()
        let a = try t.db(.public, user: "alice"), b = try t.db(.public, user: "bob")
        try a.save(note("p", "alice's", in: a))
        var changed = try b.record(for: RecordID(recordName: "p"))
        changed["text"] = .string("bob was here")
        #expect(code { try b.save(changed) } == .permissionFailure)
        #expect(code { try b.save(changed, policy: .allKeys) } == .permissionFailure)
        #expect(code { try b.delete(RecordID(recordName: "p")) } == .permissionFailure)
        #expect(try a.record(for: RecordID(recordName: "p"))["text"] == .string("alice's"))
        // Bob's own public records are his.
        try b.save(note("q", "bob's", in: b))
        #expect(code { try a.delete(RecordID(recordName: "q")) } == .permissionFailure)

        // A role given by another process (a second store object) is read on the next refusal.
        let other = try Store.open(at: t.path)
        try other.container().updateUser("bob", grantWriteRoles: ["Note"])
        try b.save(changed)
        #expect(try a.record(for: RecordID(recordName: "p"))["text"] == .string("bob was here"))
        try b.delete(RecordID(recordName: "p"))
        #expect(code { _ = try a.record(for: RecordID(recordName: "p")) } == .unknownItem)
        // The role is for Note only.
        var place = Record(recordType: "Place", recordID: RecordID(recordName: "pl", zoneID: a.zoneID(ZoneID.defaultZoneName)))
        place["name"] = .string("harbour")
        try a.save(place)
        #expect(code { try b.delete(RecordID(recordName: "pl")) } == .permissionFailure)
        try other.container().updateUser("bob", revokeWriteRoles: ["Note"])
        try a.save(note("p2", "alice's again", in: a))
        #expect(code { try b.delete(RecordID(recordName: "p2")) } == .permissionFailure)
    }

    /// User records: there from the start, empty, the owner's to fill, never created
    /// directly, never deleted, never queried.
    @Test func userRecords() throws {
        let t = try TempStore()
        let alice = try CKContainer(store: t.store, user: "alice")
        let me = try alice.userRecordID()
        #expect(me.recordName.hasPrefix("_") && me.recordName.count == 33)
        #expect(try alice.userRecordID() == me, "stable")
        let pub = try t.db(.public, user: "alice"), bobPub = try t.db(.public, user: "bob")
        #expect(try CKContainer(store: t.store, user: "bob").userRecordID() != me)

        var record = try pub.record(for: RecordID(recordName: me.recordName))
        #expect(record.recordType == "Users" && record.fields.isEmpty && record.recordChangeTag == nil)
        #expect(record.created?.userRecordName == me.recordName)
        record["nickname"] = .string("mei")
        let saved = try pub.save(record)
        #expect(try pub.record(for: RecordID(recordName: me.recordName))["nickname"] == .string("mei"))

        var theirs = try bobPub.record(for: RecordID(recordName: me.recordName))
        #expect(theirs["nickname"] == .string("mei"), "user records are public")
        theirs["nickname"] = .string("not mei")
        #expect(code { try bobPub.save(theirs) } == .permissionFailure)
        #expect(code { try bobPub.save(Record(recordType: "Users", recordID: RecordID(recordName: "_made_up"))) } == .invalidArguments)
        #expect(code { try pub.save(Record(recordType: "Users", recordID: RecordID(recordName: "plain"))) } == .invalidArguments)
        let priv = try t.db(.private, user: "alice")
        #expect(code { try priv.save(Record(recordType: "Users", recordID: RecordID(recordName: me.recordName))) } == .invalidArguments)
        #expect(code { try pub.delete(RecordID(recordName: me.recordName)) } == .permissionFailure)
        #expect(code { _ = try pub.query(RecordQuery(recordType: "Users")) } == .invalidArguments)
        #expect(try pub.record(for: RecordID(recordName: me.recordName)).recordChangeTag == saved.recordChangeTag)

        // Users is built in: production has it before any deploy, though not its new fields.
        let prod = try t.store.container().database(.public, caller: Caller(userName: "bob"), environment: .production)
        let bobID = try CKContainer(store: t.store, user: "bob").userRecordID()
        try prod.save(Record(recordType: "Users", recordID: RecordID(recordName: bobID.recordName)))
        var withField = try prod.record(for: RecordID(recordName: bobID.recordName))
        withField["mood"] = .string("fine")
        #expect(code { try prod.save(withField) } == .invalidArguments)
    }

    /// Asked once; a decision is never asked again; no answer can be asked again.
    @Test func permissionIsAskedOnce() throws {
        let t = try TempStore()
        let asked = Mutex(0)
        let answer = Mutex<Bool?>(nil)
        let question = Mutex("")
        let c = try CKContainer(store: t.store, user: "alice") { text in
            asked.withLock { $0 += 1 }
            question.withLock { $0 = text }
            return answer.withLock { $0 }
        }
        #expect(try c.status(forApplicationPermission: .userDiscoverability) == .initialState)
        #expect(try c.requestApplicationPermission(.userDiscoverability) == .couldNotComplete)
        let container = try #require(c.containerIdentifier)
        #expect(question.withLock { $0 } == "Let people who know your email address find you in \(container)?")
        #expect(try c.status(forApplicationPermission: .userDiscoverability) == .couldNotComplete)
        answer.withLock { $0 = true }
        #expect(try c.requestApplicationPermission(.userDiscoverability) == .granted)
        answer.withLock { $0 = false }
        #expect(try c.requestApplicationPermission(.userDiscoverability) == .granted)
        #expect(asked.withLock { $0 } == 2, "asked for the first two requests only")
        // Another store object (another process) sees the decision and does not ask either.
        let again = try CKContainer(store: try Store.open(at: t.path), user: "alice") { _ in
            asked.withLock { $0 += 1 }
            return false
        }
        #expect(try again.requestApplicationPermission(.userDiscoverability) == .granted)
        #expect(asked.withLock { $0 } == 2)
        #expect(throws: CKError.self) { _ = try CKContainer(store: t.store, caller: .noAccount()).status(forApplicationPermission: .userDiscoverability) }
    }

    /// Discovery finds exactly those who granted it and, for "all", are in the caller's contacts.
    @Test func discoveryFindsOnlyThoseWhoGrantedIt() throws {
        let t = try TempStore()
        let c = try t.store.container()
        try c.addUser("alice", emails: ["alice@example.com"], contacts: ["bob@example.com", "carol@example.com", "dave@example.com"])
        try c.addUser("bob", emails: ["Bob@Example.com"])
        try c.addUser("carol", emails: ["carol@example.com"])
        try c.addUser("dave", emails: ["dave@example.com"])
        try c.addUser("erin", emails: ["erin@example.com"])
        func decide(_ name: String, _ yes: Bool) throws {
            _ = try c.requestPermission(.userDiscoverability, caller: Caller(userName: name)) { yes }
        }
        try decide("bob", true)
        try decide("carol", false)
        try decide("erin", true) // granted, but not in alice's contacts
        let alice = try CKContainer(store: t.store, user: "alice")
        let all = try alice.discoverAllIdentities()
        #expect(all.map { $0.nameComponents?.nickname } == ["bob"])
        #expect(all.first?.userRecordID == (try CKContainer(store: t.store, user: "bob").userRecordID()))
        #expect(all.first?.emailAddresses == ["bob@example.com"])
        #expect(try alice.discoverUserIdentity(withEmailAddress: "ERIN@example.com")?.nameComponents?.nickname == "erin")
        #expect(try alice.discoverUserIdentity(withEmailAddress: "carol@example.com") == nil, "carol denied")
        #expect(try alice.discoverUserIdentity(withEmailAddress: "dave@example.com") == nil, "dave never answered")
        #expect(try alice.discoverUserIdentity(withEmailAddress: "nobody@example.com") == nil)
        let carolID = try CKContainer(store: t.store, user: "carol").userRecordID()
        let bobID = try CKContainer(store: t.store, user: "bob").userRecordID()
        #expect(try alice.discoverUserIdentity(withUserRecordID: carolID) == nil)
        #expect(try alice.discoverUserIdentity(withUserRecordID: bobID)?.lookupInfo?.userRecordID == bobID)
        // Identities here have no phone numbers: a lookup by one finds no one, and the
        // operation still reports the others and completes without an error.
        #expect(try alice.discoverUserIdentity(withPhoneNumber: "+1 555 0100") == nil)
        let lookups = CKUserIdentity.LookupInfo.lookupInfos(withEmails: ["erin@example.com"])
            + CKUserIdentity.LookupInfo.lookupInfos(withPhoneNumbers: ["+1 555 0100"])
            + CKUserIdentity.LookupInfo.lookupInfos(with: [bobID])
        #expect(lookups[1].phoneNumber == "+1 555 0100" && lookups[1].emailAddress == nil && lookups[1].userRecordID == nil)
        let discover = CKDiscoverUserIdentitiesOperation(userIdentityLookupInfos: lookups)
        let found = LockedBox<[CKUserIdentity.LookupInfo]>([])
        let failure = LockedBox<(any Error)?>(nil)
        discover.userIdentityDiscoveredBlock = { _, info in found.mutate { $0.append(info) } }
        discover.discoverUserIdentitiesCompletionBlock = { error in failure.mutate { $0 = error } }
        alice.add(discover)
        discover.waitUntilFinished()
        #expect(found.value == [lookups[0], lookups[2]])
        #expect(failure.value == nil)
        #expect(code { _ = try alice.shareParticipant(.init(phoneNumber: "+1 555 0100")) } == .unknownItem, "a participant by phone number")
        #expect(throws: CKError.self) { _ = try c.addUser("frank", emails: ["bob@example.com"]) }
        #expect(throws: CKError.self) { _ = try c.addUser("grace", emails: ["not an address"]) }
    }

    /// Operations added to a container run at the same time, and every completion block
    /// is called exactly once.
    @Test func containerOperationsRunConcurrentlyAndCompleteOnce() throws {
        let t = try TempStore()
        let db = try t.db(.private, user: "alice")
        try db.save(note("n", "x", in: db))
        let c = try CKContainer(store: t.store, user: "alice")
        let n = 6
        let entered = Mutex(0), sawAll = Mutex(0), completions = Mutex([Int](repeating: 0, count: n)), finals = Mutex([Int](repeating: 0, count: n))
        let done = DispatchGroup()
        for i in 0..<n {
            let op = CKFetchRecordsOperation(recordIDs: [CKRecord.ID(recordName: "n")])
            op.perRecordCompletionBlock = { _, _, _ in
                entered.withLock { $0 += 1 }
                // Wait for every other operation to get this far: only possible if they run at once.
                let deadline = Date().addingTimeInterval(30)
                while entered.withLock({ $0 }) < n && Date() < deadline { usleep(1000) }
                if entered.withLock({ $0 }) == n { sawAll.withLock { $0 += 1 } }
            }
            op.fetchRecordsCompletionBlock = { found, error in
                #expect(found?.count == 1 && error == nil)
                completions.withLock { $0[i] += 1 }
            }
            done.enter()
            op.completionBlock = {
                finals.withLock { $0[i] += 1 }
                done.leave()
            }
            c.add(op)
        }
        let discovered = Mutex(0)
        let discover = CKDiscoverAllUserIdentitiesOperation()
        discover.discoverAllUserIdentitiesCompletionBlock = { error in
            #expect(error == nil)
            discovered.withLock { $0 += 1 }
        }
        done.enter()
        discover.completionBlock = { done.leave() }
        c.add(discover)
        #expect(done.wait(timeout: .now() + 60) == .success)
        usleep(100_000) // a second call, if there were one, would come now
        #expect(sawAll.withLock { $0 } == n, "all \(n) operations ran at the same time")
        #expect(completions.withLock { $0 } == [Int](repeating: 1, count: n))
        #expect(finals.withLock { $0 } == [Int](repeating: 1, count: n))
        #expect(discovered.withLock { $0 } == 1)
    }
}
