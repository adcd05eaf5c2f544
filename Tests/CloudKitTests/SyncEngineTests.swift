import CloudKit
import CloudStore
import Foundation
import Testing
import TestSupport

/// `CKSyncEngine` as Apple's sync-engine sample drives it, with `import CloudKit` alone: each
/// device an actor that is its engine's delegate, keeps its notes with each record's system
/// fields and the engine's state (JSON-encoded between launches), queues changes in the
/// state, and handles conflicts, missing zones and records deleted elsewhere.
@Suite struct SyncEngineTests {
    static let zone = CKRecordZone.ID(zoneName: "Notes")

    /// One device: its notes, the archived system fields of each note's last known record,
    /// and what it heard, in order.
    final actor Device: CKSyncEngineDelegate {
        let database: CKDatabase
        private(set) var notes: [String: String] = [:]
        private var systemFields: [String: Data] = [:]
        private(set) var savedState: Data?
        private(set) var events: [String] = []
        private(set) var engine: CKSyncEngine?

        init(_ database: CKDatabase) { self.database = database }

        /// Makes the engine, from the state kept at the last launch, as the sample does.
        @discardableResult
        func launch(automaticallySync: Bool = false) throws -> CKSyncEngine {
            let serialization = try savedState.map { try JSONDecoder().decode(CKSyncEngine.State.Serialization.self, from: $0) }
            var configuration = CKSyncEngine.Configuration(database: database, stateSerialization: serialization, delegate: self)
            configuration.automaticallySync = automaticallySync
            let engine = CKSyncEngine(configuration)
            self.engine = engine
            return engine
        }

        func write(_ name: String, _ text: String) {
            notes[name] = text
            engine?.state.add(pendingRecordZoneChanges: [.saveRecord(CKRecord.ID(recordName: name, zoneID: SyncEngineTests.zone))])
        }

        func remove(_ name: String) {
            notes[name] = nil
            engine?.state.add(pendingRecordZoneChanges: [.deleteRecord(CKRecord.ID(recordName: name, zoneID: SyncEngineTests.zone))])
        }

        func clearEvents() { events = [] }

        /// An edit the user makes while the next batch is out (after its record was read);
        /// with `requeue`, the app takes the note's pending change out and adds it again.
        private var editWhileSending: (name: String, text: String, requeue: Bool)?
        func editWhileSending(_ name: String, _ text: String, requeue: Bool = false) { editWhileSending = (name, text, requeue) }

        /// Waits for the `stateUpdate` the engine sends after the app changed its state (it
        /// comes on its own, as Apple's does), so that the state kept holds the change.
        func waitForStateUpdate(after count: Int) async throws {
            var waited = 0
            while !events.dropFirst(count).contains("stateUpdate") && waited < 500 {
                try await Task.sleep(for: .milliseconds(20))
                waited += 1
            }
            if !events.dropFirst(count).contains("stateUpdate") { Issue.record("no stateUpdate came after the state changed: \(events)") }
        }

        private func lastKnownRecord(_ name: String) -> CKRecord? {
            guard let data = systemFields[name], let coder = try? NSKeyedUnarchiver(forReadingFrom: data) else { return nil }
            coder.requiresSecureCoding = true
            return CKRecord(coder: coder)
        }

        private func keep(_ record: CKRecord) {
            let coder = NSKeyedArchiver(requiringSecureCoding: true)
            record.encodeSystemFields(with: coder)
            systemFields[record.recordID.recordName] = coder.encodedData
        }

        func handleEvent(_ event: CKSyncEngine.Event, syncEngine: CKSyncEngine) async {
            events.append(Self.name(event))
            switch event {
            case .stateUpdate(let update):
                savedState = try? JSONEncoder().encode(update.stateSerialization)
            case .accountChange(let change):
                if case .signIn = change.changeType {
                    syncEngine.state.add(pendingDatabaseChanges: [.saveZone(CKRecordZone(zoneID: SyncEngineTests.zone))])
                }
            case .fetchedDatabaseChanges(let changes):
                for deletion in changes.deletions where deletion.zoneID == SyncEngineTests.zone { notes = [:] }
            case .fetchedRecordZoneChanges(let changes):
                for modification in changes.modifications {
                    notes[modification.record.recordID.recordName] = modification.record["text"] as? String
                    keep(modification.record)
                }
                for deletion in changes.deletions {
                    notes[deletion.recordID.recordName] = nil
                    systemFields[deletion.recordID.recordName] = nil
                }
            case .sentRecordZoneChanges(let sent):
                for record in sent.savedRecords { keep(record) }
                var again: [CKSyncEngine.PendingRecordZoneChange] = []
                var zones: [CKSyncEngine.PendingDatabaseChange] = []
                for failure in sent.failedRecordSaves {
                    let name = failure.record.recordID.recordName
                    switch failure.error.code {
                    case .serverRecordChanged:
                        // The other device's edit and ours, kept together.
                        guard let server = failure.error.serverRecord else { continue }
                        let theirs = server["text"] as? String ?? ""
                        notes[name] = [theirs, notes[name] ?? ""].sorted().joined(separator: " + ")
                        keep(server)
                        again.append(.saveRecord(failure.record.recordID))
                    case .zoneNotFound:
                        zones.append(.saveZone(CKRecordZone(zoneID: failure.record.recordID.zoneID)))
                        systemFields[name] = nil
                        again.append(.saveRecord(failure.record.recordID))
                    case .unknownItem:
                        systemFields[name] = nil
                        again.append(.saveRecord(failure.record.recordID))
                    default:
                        break
                    }
                }
                syncEngine.state.add(pendingDatabaseChanges: zones)
                syncEngine.state.add(pendingRecordZoneChanges: again)
            default:
                break
            }
        }

        func nextRecordZoneChangeBatch(_ context: CKSyncEngine.SendChangesContext, syncEngine: CKSyncEngine) async -> CKSyncEngine.RecordZoneChangeBatch? {
            let scope = context.options.scope
            let changes = syncEngine.state.pendingRecordZoneChanges.filter { scope.contains($0) }
            let notes = self.notes
            var records: [String: CKRecord] = [:]
            for case .saveRecord(let id) in changes {
                records[id.recordName] = lastKnownRecord(id.recordName) ?? CKRecord(recordType: "Note", recordID: id)
            }
            let prepared = records
            defer {
                if let (name, text, requeue) = editWhileSending {
                    editWhileSending = nil
                    if requeue { syncEngine.state.remove(pendingRecordZoneChanges: [.saveRecord(CKRecord.ID(recordName: name, zoneID: SyncEngineTests.zone))]) }
                    write(name, text)
                }
            }
            return await CKSyncEngine.RecordZoneChangeBatch(pendingChanges: changes) { recordID in
                guard let text = notes[recordID.recordName], let record = prepared[recordID.recordName] else {
                    syncEngine.state.remove(pendingRecordZoneChanges: [.saveRecord(recordID)])
                    return nil
                }
                record["text"] = text
                return record
            }
        }

        static func name(_ event: CKSyncEngine.Event) -> String {
            switch event {
            case .stateUpdate: "stateUpdate"
            case .accountChange: "accountChange"
            case .fetchedDatabaseChanges: "fetchedDatabaseChanges"
            case .fetchedRecordZoneChanges: "fetchedRecordZoneChanges"
            case .sentDatabaseChanges: "sentDatabaseChanges"
            case .sentRecordZoneChanges: "sentRecordZoneChanges"
            case .willFetchChanges: "willFetchChanges"
            case .willFetchRecordZoneChanges: "willFetchRecordZoneChanges"
            case .didFetchRecordZoneChanges: "didFetchRecordZoneChanges"
            case .didFetchChanges: "didFetchChanges"
            case .willSendChanges: "willSendChanges"
            case .didSendChanges: "didSendChanges"
            @unknown default: "unknown"
            }
        }
    }

    /// Two devices of one user on one store, each with its own engine.
    static func devices() throws -> (Device, Device, String) {
        let path = TemporaryStores.path("ckfs-syncengine-")
        _ = try Store.create(at: path)
        func device() throws -> Device { Device(try CKContainer(store: Store.open(at: path), user: "mei").privateCloudDatabase) }
        return (try device(), try device(), path)
    }

    @Test func changesMadeOnOneDeviceReachTheOther() async throws {
        let (phone, laptop, path) = try Self.devices()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let phoneEngine = try await phone.launch()
        let laptopEngine = try await laptop.launch()
        await phone.write("milk", "buy milk")
        await phone.write("call", "call Ada")
        // signIn queued the zone; the send makes it, then the notes.
        try await phoneEngine.sendChanges()
        #expect(phoneEngine.state.pendingRecordZoneChanges.isEmpty && phoneEngine.state.pendingDatabaseChanges.isEmpty)
        let sent = await phone.events
        #expect(sent.prefix(2) == ["accountChange", "stateUpdate"], "\(sent)")
        #expect(sent.contains("sentDatabaseChanges") && sent.contains("sentRecordZoneChanges") && sent.last == "didSendChanges", "\(sent)")
        try await phoneEngine.fetchChanges()

        try await laptopEngine.fetchChanges()
        #expect(await laptop.notes == ["milk": "buy milk", "call": "call Ada"])
        let heard = await laptop.events.filter { $0 != "stateUpdate" && $0 != "accountChange" && !$0.contains("Send") && $0 != "sentDatabaseChanges" }
        #expect(heard == ["willFetchChanges", "fetchedDatabaseChanges", "willFetchRecordZoneChanges", "fetchedRecordZoneChanges",
                          "didFetchRecordZoneChanges", "didFetchChanges"], "\(heard)")

        // A delete travels too; a fetch with nothing new tells of no records.
        await laptop.remove("milk")
        try await laptopEngine.sendChanges()
        try await phoneEngine.fetchChanges()
        #expect(await phone.notes == ["call": "call Ada"])
        // The laptop's next fetch brings its own delete back; the one after it, nothing.
        try await laptopEngine.fetchChanges()
        await laptop.clearEvents()
        try await laptopEngine.fetchChanges()
        let quiet = await laptop.events
        #expect(!quiet.contains("fetchedRecordZoneChanges"), "\(quiet)")
    }

    /// The state is JSON between launches: a relaunched engine fetches only what is new, and
    /// still has the changes queued before it quit.
    @Test func theKeptStateCarriesTokensAndPendingChangesAcrossLaunches() async throws {
        let (phone, laptop, path) = try Self.devices()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let phoneEngine = try await phone.launch()
        await phone.write("a", "first")
        try await phoneEngine.sendChanges()
        try await laptop.launch().fetchChanges()
        let before = await laptop.events.count
        await laptop.write("b", "queued, not sent")
        await laptop.write("d", "queued too")
        try await laptop.waitForStateUpdate(after: before)
        try await Task.sleep(for: .milliseconds(200))
        // Quit and relaunch the laptop: its queued change and its fetch position survive.
        await laptop.clearEvents()
        let relaunched = try await laptop.launch()
        #expect(relaunched.state.pendingRecordZoneChanges == ["b", "d"].map { .saveRecord(CKRecord.ID(recordName: $0, zoneID: Self.zone)) })
        await phone.write("c", "new on the phone")
        try await phoneEngine.sendChanges()
        try await relaunched.fetchChanges()
        #expect(await laptop.notes == ["a": "first", "b": "queued, not sent", "c": "new on the phone", "d": "queued too"])
        try await relaunched.sendChanges()
        try await phoneEngine.fetchChanges()
        #expect(await phone.notes["b"] == "queued, not sent")
        let heard = await laptop.events
        #expect(heard.contains("fetchedRecordZoneChanges") && !heard.contains("accountChange"), "a relaunch is not a new sign-in: \(heard)")
    }

    /// Both devices change one note: the second send fails with `serverRecordChanged`, the
    /// delegate merges the server's record into its own and queues it again, and the next
    /// send succeeds, as the sample's tests expect.
    @Test func aConflictIsMergedAndSentAgain() async throws {
        let (phone, laptop, path) = try Self.devices()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let phoneEngine = try await phone.launch()
        let laptopEngine = try await laptop.launch()
        await phone.write("list", "eggs")
        try await phoneEngine.sendChanges()
        try await laptopEngine.fetchChanges()
        await phone.write("list", "eggs, flour")
        await laptop.write("list", "eggs, sugar")
        try await phoneEngine.sendChanges()
        do {
            try await laptopEngine.sendChanges()
            Issue.record("the stale save went through")
        } catch let error as CKError {
            #expect(error.code == .partialFailure)
            let item = error.partialErrorsByItemID?[CKRecord.ID(recordName: "list", zoneID: Self.zone)] as? CKError
            #expect(item?.code == .serverRecordChanged, "\(error)")
        }
        #expect(laptopEngine.state.pendingRecordZoneChanges.count == 1, "the delegate queued its merge")
        try await laptopEngine.sendChanges()
        try await phoneEngine.fetchChanges()
        #expect(await phone.notes["list"] == "eggs, flour + eggs, sugar")
        #expect(await laptop.notes["list"] == "eggs, flour + eggs, sugar")
    }

    /// A note edited again while its earlier version is being sent stays pending when that
    /// batch comes back, so the send goes on with the edit: nothing the user wrote is dropped
    /// with the batch.
    @Test func anEditMadeWhileItsBatchIsOutIsSentToo() async throws {
        let (phone, laptop, path) = try Self.devices()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let phoneEngine = try await phone.launch()
        await phone.write("draft", "v1")
        await phone.editWhileSending("draft", "v2")
        try await phoneEngine.sendChanges()
        #expect(phoneEngine.state.pendingRecordZoneChanges.isEmpty)
        try await laptop.launch().fetchChanges()
        #expect(await laptop.notes == ["draft": "v2"])
        // The same when the app takes the change out and adds it again meanwhile.
        await phone.write("draft", "v3")
        await phone.editWhileSending("draft", "v4", requeue: true)
        try await phoneEngine.sendChanges()
        try await laptop.engine!.fetchChanges()
        #expect(await laptop.notes == ["draft": "v4"])
    }

    /// The zone deleted behind the engine's back: the save fails with `zoneNotFound`, the
    /// delegate queues the zone and the note, and the next send makes both. A record deleted
    /// elsewhere (`unknownItem` for its old version) is saved anew the same way.
    @Test func aMissingZoneOrRecordIsMadeAgain() async throws {
        let (phone, laptop, path) = try Self.devices()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let phoneEngine = try await phone.launch()
        await phone.write("todo", "water plants")
        try await phoneEngine.sendChanges()
        _ = try await phone.database.deleteRecordZone(withID: Self.zone)
        await phone.write("todo", "water plants today")
        let zoneGone = await #expect(throws: CKError.self) { try await phoneEngine.sendChanges() }
        #expect(zoneGone?.code == .partialFailure && zoneGone?.partialErrorsByItemID?.values.map { ($0 as? CKError)?.code } == [.zoneNotFound])
        try await phoneEngine.sendChanges()
        let laptopEngine = try await laptop.launch()
        try await laptopEngine.fetchChanges()
        #expect(await laptop.notes == ["todo": "water plants today"])

        // The laptop deletes the note; the phone, not knowing, edits its old version.
        await laptop.remove("todo")
        try await laptopEngine.sendChanges()
        await phone.write("todo", "water plants now")
        let recordGone = await #expect(throws: CKError.self) { try await phoneEngine.sendChanges() }
        #expect(recordGone?.code == .partialFailure && recordGone?.partialErrorsByItemID?.values.map { ($0 as? CKError)?.code } == [.unknownItem])
        try await phoneEngine.sendChanges()
        try await laptopEngine.fetchChanges()
        #expect(await laptop.notes == ["todo": "water plants now"])
    }

    /// With `automaticallySync` the engine sends soon after a change is queued, and fetches
    /// what another device sent, with no call from the app.
    @Test func anAutomaticEngineSendsAndFetchesOnItsOwn() async throws {
        let (phone, laptop, path) = try Self.devices()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let phoneEngine = try await phone.launch(automaticallySync: true)
        try await laptop.launch(automaticallySync: true)
        await phone.write("auto", "synced on its own")
        var waited = 0
        while await laptop.notes["auto"] == nil && waited < 300 {
            try await Task.sleep(for: .milliseconds(100))
            waited += 1
        }
        let (notes, events) = (await laptop.notes, await laptop.events)
        #expect(notes["auto"] == "synced on its own", "\(events)")
        #expect(phoneEngine.state.pendingRecordZoneChanges.isEmpty)
        await phoneEngine.cancelOperations()
    }

    /// The state's bookkeeping as Apple documents it: one change per record, a delete
    /// replacing a save, and scopes that pick records and zones.
    @Test func pendingChangesKeepOnePerRecord() throws {
        let path = TemporaryStores.path("ckfs-syncengine-")
        defer { try? FileManager.default.removeItem(atPath: path) }
        let db = try CKContainer(store: Store.create(at: path), user: "mei").privateCloudDatabase
        final class Quiet: CKSyncEngineDelegate {
            func handleEvent(_ event: CKSyncEngine.Event, syncEngine: CKSyncEngine) async {}
            func nextRecordZoneChangeBatch(_ context: CKSyncEngine.SendChangesContext, syncEngine: CKSyncEngine) async -> CKSyncEngine.RecordZoneChangeBatch? { nil }
        }
        let delegate = Quiet()
        var configuration = CKSyncEngine.Configuration(database: db, stateSerialization: nil, delegate: delegate)
        configuration.automaticallySync = false
        let engine = CKSyncEngine(configuration)
        let (a, b) = (CKRecord.ID(recordName: "a", zoneID: Self.zone), CKRecord.ID(recordName: "b", zoneID: Self.zone))
        engine.state.add(pendingRecordZoneChanges: [.saveRecord(a), .saveRecord(b), .saveRecord(a)])
        #expect(engine.state.pendingRecordZoneChanges == [.saveRecord(a), .saveRecord(b)])
        engine.state.add(pendingRecordZoneChanges: [.deleteRecord(a)])
        #expect(engine.state.pendingRecordZoneChanges == [.saveRecord(b), .deleteRecord(a)])
        engine.state.remove(pendingRecordZoneChanges: [.saveRecord(b)])
        #expect(engine.state.pendingRecordZoneChanges == [.deleteRecord(a)])
        #expect(CKSyncEngine.SendChangesOptions.Scope.recordIDs([a]).contains(.deleteRecord(a)))
        #expect(!CKSyncEngine.SendChangesOptions.Scope.zoneIDs([CKRecordZone.ID(zoneName: "Other")]).contains(a))
        #expect(CKSyncEngine.FetchChangesOptions.Scope.allExcluding([Self.zone]).contains(CKRecordZone.ID(zoneName: "Other")))
    }
}
