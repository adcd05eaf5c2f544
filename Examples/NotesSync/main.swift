// A small app written against Apple's CloudKit API, as on Apple's platforms, with
// `import CloudKit` alone. It keeps notes in the private database's zone "Notes" and syncs
// them the way CloudKit apps do: the zone's change token is archived with NSKeyedArchiver
// between launches, and each launch fetches only what changed since.
//
//     NotesSync save NAME TEXT      save a note (the zone is made when missing), and keep its
//                                   name as the last one saved, in the key-value store
//     NotesSync last                print the name of the note saved last
//     NotesSync delete NAME         delete a note
//     NotesSync sync TOKEN-FILE     print what changed since the token in TOKEN-FILE (no file:
//                                   everything), one line each, then keep the new token there
//
// It uses `CKContainer.default()` and `NSUbiquitousKeyValueStore()`: the store at CKFS_STORE,
// as the OS user.
import CloudKit

let zoneID = CKRecordZone.ID(zoneName: "Notes")
let database = CKContainer.default().privateCloudDatabase

/// Saves the zone when it is missing, as apps do before their first save.
func ensureZone() async throws {
    do { _ = try await database.recordZone(for: zoneID) } catch let error as CKError where error.code == .zoneNotFound {
        _ = try await database.save(CKRecordZone(zoneID: zoneID))
    }
}

/// The changes since the token archived in `path`, printed; the new token archived there.
func sync(tokenFile path: String) async throws {
    let url = URL(fileURLWithPath: path)
    var token: CKServerChangeToken?
    if let data = try? Data(contentsOf: url) {
        token = try NSKeyedUnarchiver.unarchivedObject(ofClass: CKServerChangeToken.self, from: data)
    }
    let configuration = CKFetchRecordZoneChangesOperation.ZoneConfiguration(previousServerChangeToken: token)
    let operation = CKFetchRecordZoneChangesOperation(recordZoneIDs: [zoneID], configurationsByRecordZoneID: [zoneID: configuration])
    operation.fetchAllChanges = true
    operation.recordWasChangedBlock = { id, result in
        switch result {
        case .success(let note): print("changed \(id.recordName) \(note["text"] as? String ?? "")")
        case .failure(let error): print("failed \(id.recordName) \(error)")
        }
    }
    operation.recordWithIDWasDeletedBlock = { id, _ in print("deleted \(id.recordName)") }
    let latest = Locked<CKServerChangeToken?>(nil)
    operation.recordZoneChangeTokensUpdatedBlock = { _, token, _ in latest.set(token) }
    operation.recordZoneFetchResultBlock = { _, result in
        if case .success(let end) = result { latest.set(end.serverChangeToken) }
    }
    try await withCheckedThrowingContinuation { (done: CheckedContinuation<Void, Error>) in
        operation.fetchRecordZoneChangesResultBlock = { done.resume(with: $0) }
        database.add(operation)
    }
    if let end = latest.get() {
        try NSKeyedArchiver.archivedData(withRootObject: end, requiringSecureCoding: true).write(to: url, options: .atomic)
    }
}

/// A value that the operation's blocks set from its queue; `lock` guards `value`.
final class Locked<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value
    init(_ value: Value) { self.value = value }
    func set(_ new: Value) { lock.withLock { value = new } }
    func get() -> Value { lock.withLock { value } }
}

let arguments = Array(CommandLine.arguments.dropFirst())
do {
    switch (arguments.first, arguments.count) {
    case ("save", 3):
        try await ensureZone()
        let note = CKRecord(recordType: "Note", recordID: CKRecord.ID(recordName: arguments[1], zoneID: zoneID))
        note["text"] = arguments[2]
        let saved = try await database.modifyRecords(saving: [note], deleting: [], savePolicy: .allKeys).saveResults[note.recordID]
        print("saved \(try saved?.get().recordID.recordName ?? "nothing")")
        let settings = NSUbiquitousKeyValueStore()
        settings.set(arguments[1], forKey: "lastSaved")
        guard settings.synchronize() else { throw CKError(.internalError, "the key-value store did not write lastSaved") }
    case ("last", 1):
        print(NSUbiquitousKeyValueStore.default.string(forKey: "lastSaved") ?? "none")
    case ("delete", 2):
        print("deleted \(try await database.deleteRecord(withID: CKRecord.ID(recordName: arguments[1], zoneID: zoneID)).recordName)")
    case ("sync", 2):
        try await sync(tokenFile: arguments[1])
    default:
        FileHandle.standardError.write(Data("usage: NotesSync save NAME TEXT | last | delete NAME | sync TOKEN-FILE\n".utf8))
        exit(2)
    }
} catch {
    FileHandle.standardError.write(Data("error: \(error.localizedDescription)\n".utf8))
    exit(1)
}
