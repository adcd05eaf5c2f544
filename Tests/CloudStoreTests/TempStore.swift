import Foundation
@testable import CloudStore

/// A store in a fresh temporary directory, removed when the fixture goes away.
final class TempStore: @unchecked Sendable {
    let path: String
    let store: Store

    init(settings: StoreSettings = StoreSettings(), io: any StorageIO = PosixIO(), tuning: ZoneTuning? = nil) throws {
        path = NSTemporaryDirectory() + "ckfs-test-" + UUID().uuidString
        store = try Store.create(at: path, settings: settings, io: io, tuning: tuning)
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }

    func db(_ scope: DatabaseScope = .private, user: String = "alice", device: String = "test-device",
            environment: CloudStore.Environment = .development) throws -> Database {
        try store.container().database(scope, caller: Caller(userName: user, deviceID: device), environment: environment)
    }

    /// A second, independent opening of the same directory, as another process would have.
    func reopen(io: any StorageIO = PosixIO(), tuning: ZoneTuning? = nil) throws -> Store {
        try Store.open(at: path, io: io, tuning: tuning)
    }
}

func record(_ name: String, type: String = "Note", zone: String = ZoneID.defaultZoneName, _ fields: [String: FieldValue] = [:]) -> Record {
    Record(recordType: type, recordID: RecordID(recordName: name, zoneID: ZoneID(zoneName: zone)), fields: fields)
}

func id(_ name: String, zone: String = ZoneID.defaultZoneName) -> RecordID {
    RecordID(recordName: name, zoneID: ZoneID(zoneName: zone))
}

extension Result {
    var error: Failure? { if case .failure(let e) = self { return e }; return nil }
}
