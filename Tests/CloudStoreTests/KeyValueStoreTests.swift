import Foundation
import Testing
import TestSupport
@testable import CloudStore

/// The key-value store through its Swift API. Clients with `synchronizeEvery: nil`
/// sync only when told, so each test decides when data moves.
@Suite struct KeyValueStoreTests {
    /// Collects a client's did-change-externally events from its async sequence.
    final class Recorder: @unchecked Sendable {
        /// Guards `events`.
        private let lock = NSLock()
        private var events: [KeyValueChange] = []
        private var task: Task<Void, Never>?

        init(_ client: KeyValueStore) {
            let stream = client.changes()
            task = Task { [weak self] in
                for await change in stream { self?.lock.withLock { self?.events.append(change) } }
            }
        }

        deinit { task?.cancel() }

        var all: [KeyValueChange] { lock.withLock { events } }

        /// Waits up to `seconds` for `count` events in all. The events come through a task, and
        /// this waits on the same cooperative threads: on a loaded machine (CI runs the suites at
        /// once on two cores, some holding those threads) both may wait seconds for a turn, so
        /// the default bound is generous; it only costs time when an event never comes.
        func wait(for count: Int, seconds: Double = 60) async -> [KeyValueChange] {
            let deadline = Date().addingTimeInterval(seconds)
            while all.count < count && Date() < deadline { try? await Task.sleep(for: .milliseconds(20)) }
            // The deadline may pass while this task and the recorder's both waited for a thread;
            // the recorder's turn was queued first, so it gets one more before this gives up.
            if all.count < count { try? await Task.sleep(for: .milliseconds(200)) }
            return all
        }

        /// Lets the delivery queue drain, then returns what came.
        func settle() async -> [KeyValueChange] {
            try? await Task.sleep(for: .milliseconds(300))
            return all
        }
    }

    func client(_ t: TempStore, user: String = "alice", every: Double? = nil) throws -> KeyValueStore {
        try KeyValueStore(store: t.store, user: user, synchronizeEvery: every)
    }

    @Test func datesKeepWholeSeconds() throws {
        let t = try TempStore()
        let kv = try client(t)
        try kv.setValue(.date(Date(timeIntervalSince1970: 1000.75)), forKey: "when")
        #expect(kv.value(forKey: "when") == .date(Date(timeIntervalSince1970: 1000)))
        try kv.sync()
        #expect(try client(t).value(forKey: "when") == .date(Date(timeIntervalSince1970: 1000)))
    }

    // MARK: Limits, each at and one past its boundary

    /// Runs `refused` expecting `code`, and checks that nothing changed, in memory or on
    /// disk, and that only this client heard `quotaViolationChange` for `key`.
    func expectRefused(_ code: CKError.Code, key: String, _ t: TempStore, _ kv: KeyValueStore, _ refused: () throws(CKError) -> Void) async throws {
        let other = try client(t)
        let mine = Recorder(kv), theirs = Recorder(other)
        let before = kv.entries
        let onDisk = try String(contentsOfFile: try kvPath(t), encoding: .utf8)
        do {
            try refused()
            Issue.record("expected \(code)")
        } catch {
            #expect(error.code == code, "\(error)")
        }
        try kv.sync()
        #expect(kv.entries == before)
        #expect(try String(contentsOfFile: try kvPath(t), encoding: .utf8) == onDisk)
        let heard = await mine.wait(for: 1)
        #expect(heard == [KeyValueChange(reason: .quotaViolationChange, changedKeys: [key])])
        try other.sync()
        #expect(await theirs.settle().isEmpty)
    }

    func kvPath(_ t: TempStore, user: String = "alice") throws -> String {
        try keyValueFilePath(t.store.container(), user: user)
    }

    @Test func keysHaveAtMost64BytesOfUTF8() async throws {
        let t = try TempStore()
        let kv = try client(t)
        let ascii64 = String(repeating: "k", count: 64)
        let utf8At64 = String(repeating: "é", count: 32)
        try kv.setValue(.bool(true), forKey: ascii64)
        try kv.setValue(.bool(true), forKey: utf8At64)
        try kv.sync()
        #expect(try client(t).entries.count == 2)
        try await expectRefused(.limitExceeded, key: ascii64 + "k", t, kv) { () throws(CKError) in try kv.setValue(.bool(true), forKey: ascii64 + "k") }
        try await expectRefused(.limitExceeded, key: utf8At64 + "e", t, kv) { () throws(CKError) in try kv.setValue(.bool(true), forKey: utf8At64 + "e") }
    }

    @Test func atMost1024Keys() async throws {
        let t = try TempStore()
        let kv = try client(t)
        for i in 0..<1024 { try kv.setValue(.integer(Int64(i)), forKey: "k\(i)") }
        try kv.sync()
        #expect(try client(t).entries.count == 1024)
        try await expectRefused(.quotaExceeded, key: "k1024", t, kv) { () throws(CKError) in try kv.setValue(.integer(0), forKey: "k1024") }
        // Replacing a value is no new key; removing one makes room.
        try kv.setValue(.string("again"), forKey: "k5")
        try kv.removeValue(forKey: "k0")
        try kv.setValue(.integer(0), forKey: "k1024")
        try kv.sync()
        #expect(try client(t).entries.count == 1024)
    }

    @Test func aValueHasAtMostOneMegabyteAsAPropertyList() async throws {
        let t = try TempStore()
        let kv = try client(t)
        let limit = t.store.settings.keyValueLimits.maxValueBytes
        #expect(limit == 1_048_576)
        let atLimit = String(repeating: "x", count: limit - "<string></string>".utf8.count)
        try kv.setValue(.string(atLimit), forKey: "big")
        try kv.sync()
        #expect(try client(t).value(forKey: "big") == .string(atLimit))
        try kv.removeValue(forKey: "big")
        try kv.sync()
        try await expectRefused(.limitExceeded, key: "big", t, kv) { () throws(CKError) in try kv.setValue(.string(atLimit + "x"), forKey: "big") }
        // Data counts as its base64 text: 786,429 bytes is 1,048,572 characters of base64.
        let dataAtLimit = [UInt8](repeating: 7, count: 786_429)
        #expect(PropertyListWriter.compactSize(.data(dataAtLimit)) == 1_048_572 + "<data></data>".utf8.count)
        try await expectRefused(.limitExceeded, key: "blob", t, kv) { () throws(CKError) in try kv.setValue(.data(dataAtLimit), forKey: "blob") }
    }

    @Test func allValuesTogetherHaveAtMostOneMegabyte() async throws {
        let t = try TempStore()
        let kv = try client(t)
        let limit = t.store.settings.keyValueLimits.maxTotalBytes
        let overhead = "<string></string>".utf8.count
        let half = limit / 2
        try kv.setValue(.string(String(repeating: "a", count: half - overhead)), forKey: "a")
        try kv.setValue(.string(String(repeating: "b", count: limit - half - overhead)), forKey: "b")
        try kv.sync()
        #expect(try client(t).entries.count == 2)
        try await expectRefused(.quotaExceeded, key: "c", t, kv) { () throws(CKError) in try kv.setValue(.bool(true), forKey: "c") }
        try await expectRefused(.quotaExceeded, key: "b", t, kv) { () throws(CKError) in
            try kv.setValue(.string(String(repeating: "b", count: limit - half - overhead + 1)), forKey: "b")
        }
    }

    // MARK: Syncing and notifications

    @Test func othersChangesArriveAsServerChangeAndTheWriterHearsNothing() async throws {
        let t = try TempStore()
        let writer = try client(t), reader = try client(t)
        let wrote = Recorder(writer), read = Recorder(reader)
        let observed = NotificationRecorder(reader)
        try writer.setValue(.string("1"), forKey: "a")
        try writer.setValue(.string("2"), forKey: "b")
        try writer.sync()
        #expect(reader.value(forKey: "a") == nil)
        try reader.sync()
        #expect(reader.value(forKey: "a") == .string("1"))
        let heard = await read.wait(for: 1)
        #expect(heard == [KeyValueChange(reason: .serverChange, changedKeys: ["a", "b"])])
        #expect(await observed.wait(for: 1).first?.keys == ["a", "b"])
        #expect(observed.all.first?.reason == KeyValueChangeReason.serverChange.rawValue)
        // A sync with nothing new says nothing.
        try reader.sync()
        try writer.sync()
        #expect(await read.settle().count == 1)
        #expect(wrote.all.isEmpty)
    }

    @Test func changesArriveOnTheirOwnWithoutASyncCall() async throws {
        let t = try TempStore()
        let writer = try client(t, every: 0.2), reader = try client(t, every: 0.2)
        let read = Recorder(reader), wrote = Recorder(writer)
        try writer.setValue(.integer(7), forKey: "n")
        // No sync call anywhere: the writer's timer writes, the reader's timer reads. The wait
        // keeps `wait`'s generous bound: the timers run on their own queues, but the recorder
        // hears through a task, and on a loaded machine that task waits for a turn.
        let heard = await read.wait(for: 1)
        #expect(heard == [KeyValueChange(reason: .serverChange, changedKeys: ["n"])])
        #expect(reader.value(forKey: "n") == .integer(7))
        #expect(await wrote.settle().isEmpty)
    }

    @Test func syncMergesOthersKeysAndTheLaterSyncWinsAKey() throws {
        let t = try TempStore()
        let a = try client(t), b = try client(t)
        try a.setValue(.string("a"), forKey: "onlyA")
        try a.setValue(.string("from a"), forKey: "both")
        try b.setValue(.string("b"), forKey: "onlyB")
        try b.setValue(.string("from b"), forKey: "both")
        try a.sync()
        try b.sync()
        try a.sync()
        for c in [a, b, try client(t)] {
            #expect(c.entries == ["onlyA": .string("a"), "onlyB": .string("b"), "both": .string("from b")])
        }
    }

    @Test func aWriteThatNoLongerFitsAfterMergingIsDroppedAndReported() async throws {
        let t = try TempStore()
        let a = try client(t), b = try client(t)
        let heardA = Recorder(a)
        let limit = t.store.settings.keyValueLimits.maxTotalBytes
        let big = String(repeating: "z", count: limit - 17 - 100)
        try a.setValue(.string(big), forKey: "big")
        try b.setValue(.string(big), forKey: "big2")
        #expect(try b.sync().isEmpty)
        // The sync says which write it dropped, and why.
        let dropped = try a.sync()
        #expect(Array(dropped.keys) == ["big"])
        #expect(dropped["big"]?.code == .quotaExceeded && dropped["big"]?.message.contains("dropped") == true, "\(dropped)")
        #expect(a.value(forKey: "big") == nil)
        #expect(a.value(forKey: "big2") == .string(big))
        let heard = await heardA.wait(for: 2)
        #expect(heard.contains(KeyValueChange(reason: .quotaViolationChange, changedKeys: ["big"])))
        #expect(heard.contains(KeyValueChange(reason: .serverChange, changedKeys: ["big2"])))
    }

    @Test func aStoreThatCannotBeReadRefusesWritesUntilItCanThenSaysInitialSyncChange() async throws {
        let t = try TempStore()
        let first = try client(t)
        try first.setValue(.string("kept"), forKey: "k")
        try first.sync()
        let path = try kvPath(t)
        let good = try Data(contentsOf: URL(fileURLWithPath: path))
        try Data("<plist><dict><key>k</key></dict>".utf8).write(to: URL(fileURLWithPath: path))
        let late = try client(t)
        let heard = Recorder(late)
        #expect(late.lastError?.code == .badDatabase)
        #expect(late.lastError?.description.contains("keyvalue.plist") == true)
        #expect(throws: CKError.self) { try late.setValue(.bool(true), forKey: "x") }
        #expect(throws: CKError.self) { try late.sync() }
        try good.write(to: URL(fileURLWithPath: path))
        try late.sync()
        #expect(late.value(forKey: "k") == .string("kept"))
        #expect(await heard.wait(for: 1) == [KeyValueChange(reason: .initialSyncChange, changedKeys: ["k"])])
    }

    @Test func switchingUserSaysAccountChange() async throws {
        let t = try TempStore()
        let bob = try client(t, user: "bob")
        try bob.setValue(.string("bob's"), forKey: "shared")
        try bob.setValue(.bool(true), forKey: "bobOnly")
        try bob.sync()
        let kv = try client(t)
        try kv.setValue(.string("alice's"), forKey: "shared")
        try kv.setValue(.bool(true), forKey: "aliceOnly")
        let heard = Recorder(kv)
        try kv.switchUser(to: "bob")
        #expect(kv.user == "bob")
        #expect(kv.entries == ["shared": .string("bob's"), "bobOnly": .bool(true)])
        #expect(await heard.wait(for: 1) == [KeyValueChange(reason: .accountChange, changedKeys: ["aliceOnly", "bobOnly", "shared"])])
        // Alice's pending writes were saved in her store before the switch.
        #expect(try client(t).entries == ["shared": .string("alice's"), "aliceOnly": .bool(true)])
    }

    @Test func theFileIsAPlistAnyReaderReads() throws {
        let t = try TempStore()
        let kv = try client(t)
        try kv.setValue(.dictionary(["when": .date(Date(timeIntervalSince1970: 86400)), "raw": .data([0, 1])]), forKey: "nested")
        try kv.setValue(.array([.array([.integer(1)]), .real(0.5)]), forKey: "list")
        try kv.sync()
        let out = try runPython("""
        import plistlib
        v = plistlib.load(open("\(try kvPath(t))", "rb"))
        print(v["nested"]["when"].isoformat(), list(v["nested"]["raw"]), v["list"])
        """)
        #expect(String(decoding: out, as: UTF8.self) == "1970-01-02T00:00:00 [0, 1] [[1], 0.5]\n")
    }
}

/// Collects `didChangeExternallyNotification`s posted for one client.
final class NotificationRecorder: @unchecked Sendable {
    /// Guards `events`.
    private let lock = NSLock()
    private var events: [(reason: Int, keys: [String])] = []
    private var token: NSObjectProtocol?

    init(_ client: KeyValueStore) {
        token = NotificationCenter.default.addObserver(forName: KeyValueStore.didChangeExternallyNotification, object: client, queue: nil) { [weak self] note in
            let reason = note.userInfo?[KeyValueStore.changeReasonKey] as? Int ?? -1
            let keys = note.userInfo?[KeyValueStore.changedKeysKey] as? [String] ?? []
            self?.lock.withLock { self?.events.append((reason, keys)) }
        }
    }

    deinit { if let token { NotificationCenter.default.removeObserver(token) } }

    var all: [(reason: Int, keys: [String])] { lock.withLock { events } }

    func wait(for count: Int, seconds: Double = 60) async -> [(reason: Int, keys: [String])] {
        let deadline = Date().addingTimeInterval(seconds)
        while all.count < count && Date() < deadline { try? await Task.sleep(for: .milliseconds(20)) }
        // As ``Recorder/wait(for:seconds:)``: one more turn after the deadline.
        if all.count < count { try? await Task.sleep(for: .milliseconds(200)) }
        return all
    }
}
