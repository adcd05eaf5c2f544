import Foundation
import Synchronization
import CloudStore

/// A store in a fresh temporary directory, removed when the fixture goes away, after the
/// record files its openings still write behind their commits (else a late file write keeps a
/// folder of the removed tree, and the store is left in /tmp).
package final class TempStore: @unchecked Sendable {
    package let path: String
    package let store: Store
    /// The other openings, from ``reopen(io:tuning:reading:)``, held weakly.
    private let openings = Mutex<[WeakStore]>([])

    private struct WeakStore { weak var store: Store? }

    package init(settings: StoreSettings = StoreSettings(), io: any StorageIO = PosixIO(), tuning: ZoneTuning? = nil) throws {
        path = NSTemporaryDirectory() + "ckfs-test-" + UUID().uuidString
        store = try Store.create(at: path, settings: settings, io: io, tuning: tuning)
    }

    deinit {
        store.waitForRecordFiles()
        for opening in openings.withLock({ $0 }) { opening.store?.waitForRecordFiles() }
        try? FileManager.default.removeItem(atPath: path)
    }

    package func db(_ scope: DatabaseScope = .private, user: String = "alice", device: String = "test-device",
            environment: CloudStore.Environment = .development) throws -> Database {
        try store.container().database(scope, caller: Caller(userName: user, deviceID: device), environment: environment)
    }

    /// A second, independent opening of the same directory, as another process would have.
    package func reopen(io: any StorageIO = PosixIO(), tuning: ZoneTuning? = nil, reading: ZoneReading = .inMemory) throws -> Store {
        let opened = try Store.open(at: path, io: io, tuning: tuning, reading: reading)
        openings.withLock { $0.append(WeakStore(store: opened)) }
        return opened
    }
}

package func record(_ name: String, type: String = "Note", zone: String = ZoneID.defaultZoneName, _ fields: [String: FieldValue] = [:]) -> Record {
    Record(recordType: type, recordID: RecordID(recordName: name, zoneID: ZoneID(zoneName: zone)), fields: fields)
}

package func id(_ name: String, zone: String = ZoneID.defaultZoneName) -> RecordID {
    RecordID(recordName: name, zoneID: ZoneID(zoneName: zone))
}

extension Result {
    package var error: Failure? { if case .failure(let e) = self { return e }; return nil }
}

extension ZoneTuning {
    /// The defaults with the changes `change` makes, for tests: `.with { $0.compactLogBytes = 4_000 }`.
    package static func with(_ change: (inout ZoneTuning) -> Void) -> ZoneTuning {
        var tuning = ZoneTuning()
        change(&tuning)
        return tuning
    }
}

/// Saves `count` records `<prefix>0`… of about 250 bytes each (one operation each): enough
/// to pass a small log limit. `fields` go into each record beside the padding.
package func savePadded(_ db: Database, count: Int, prefix: String = "r", fields: [String: FieldValue] = [:]) throws {
    for i in 0..<count {
        var f = fields
        f["pad"] = .string(String(repeating: "p", count: 200))
        _ = try db.save(record("\(prefix)\(i)", f))
    }
}

/// Where the file backend keeps a user's key-value store: `keyvalue.plist`, for tests that
/// read, damage or race the file itself.
package func keyValueFilePath(_ container: Container, user: String) throws -> String {
    let storage = try container.keyValueStorage(user: user)
    guard let file = storage as? KeyValueFile else { throw CKError(.internalError, "the store's key-value storage is not a file") }
    return file.path
}

/// The file that keeps a user's notifications in the file backend, for tests that read or
/// damage it.
package func notificationLogFile(_ container: Container, user: String) throws -> NotificationLog {
    guard let file = try container.notificationLog(user: user) as? NotificationLog else {
        throw CKError(.internalError, "the store's notification storage is not a file")
    }
    return file
}
