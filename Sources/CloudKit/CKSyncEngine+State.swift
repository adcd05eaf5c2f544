import Foundation
import CloudStore

extension CKSyncEngine {
    /// A record change waiting to be sent.
    public enum PendingRecordZoneChange: Sendable, Hashable, CustomStringConvertible {
        case saveRecord(CKRecord.ID)
        case deleteRecord(CKRecord.ID)

        var recordID: CKRecord.ID {
            switch self { case .saveRecord(let id), .deleteRecord(let id): id }
        }

        public var description: String {
            switch self {
            case .saveRecord(let id): "saveRecord(\(id.recordName) in \(id.zoneID.zoneName))"
            case .deleteRecord(let id): "deleteRecord(\(id.recordName) in \(id.zoneID.zoneName))"
            }
        }
    }

    /// A zone change waiting to be sent.
    public enum PendingDatabaseChange: Sendable, Hashable, CustomStringConvertible {
        case saveZone(CKRecordZone)
        case deleteZone(CKRecordZone.ID)

        var zoneID: CKRecordZone.ID {
            switch self {
            case .saveZone(let zone): zone.zoneID
            case .deleteZone(let id): id
            }
        }

        public var description: String {
            switch self {
            case .saveZone(let zone): "saveZone(\(zone.zoneID.zoneName))"
            case .deleteZone(let id): "deleteZone(\(id.zoneName))"
            }
        }

        /// Equal when of the same kind for the same zone (a `CKRecordZone` made anew for the
        /// same ID is the same change).
        public static func == (a: Self, b: Self) -> Bool {
            switch (a, b) {
            case (.saveZone(let x), .saveZone(let y)): x.zoneID == y.zoneID
            case (.deleteZone(let x), .deleteZone(let y)): x == y
            default: false
            }
        }

        public func hash(into hasher: inout Hasher) {
            if case .saveZone = self { hasher.combine(0) } else { hasher.combine(1) }
            hasher.combine(zoneID)
        }
    }

    /// What the engine knows between launches: the changes waiting to be sent, and how far it
    /// has fetched. The app keeps its `Serialization` (from each `stateUpdate` event) and hands
    /// it back to the next engine it makes.
    ///
    /// `@unchecked Sendable`: every stored value is behind `lock`, but `onChange`, which the
    /// engine sets once, before the state is shared.
    public final class State: @unchecked Sendable {
        /// The state as the app keeps it: opaque, `Codable`.
        public struct Serialization: Codable, Sendable {
            struct Zone: Codable, Sendable, Hashable {
                var name: String
                var owner: String
            }

            struct Change: Codable, Sendable {
                /// `saveRecord`, `deleteRecord`, `saveZone` or `deleteZone`.
                var kind: String
                var zone: Zone
                var recordName: String?
            }

            var databaseToken: String?
            var zoneTokens: [String: String] = [:]
            var unfetchedZones: [Zone] = []
            var pendingRecordZoneChanges: [Change] = []
            var pendingDatabaseChanges: [Change] = []
            var hasPendingUntrackedChanges = false
            /// The user the state is for.
            var userRecordName: String?
        }

        private let lock = NSLock()
        /// Guarded by `lock`.
        private var recordChanges: [PendingRecordZoneChange] = []
        private var databaseChanges: [PendingDatabaseChange] = []
        private var untracked = false
        private var unfetched: [CKRecordZone.ID] = []
        private var databaseToken: CKServerChangeToken?
        private var zoneTokens: [CKRecordZone.ID: CKServerChangeToken] = [:]
        private var user: String?
        /// When each pending record change was last added (a count that only grows): a change
        /// added again while its batch is out is not dropped when the batch comes back.
        private var versions: [PendingRecordZoneChange: Int] = [:]
        private var lastVersion = 0
        /// Told of every change the app makes (the engine sends a `stateUpdate` and, when it
        /// syncs on its own, schedules a send). Set once by the engine.
        var onChange: (@Sendable (_ byApp: Bool) -> Void)?

        init(_ serialization: Serialization?) {
            guard let s = serialization else { return }
            func zoneID(_ z: Serialization.Zone) -> CKRecordZone.ID { CKRecordZone.ID(zoneName: z.name, ownerName: z.owner) }
            databaseToken = s.databaseToken.map { CKServerChangeToken(text: $0) }
            for (key, token) in s.zoneTokens {
                let parts = key.split(separator: "\n", maxSplits: 1).map(String.init)
                guard parts.count == 2 else { continue }
                zoneTokens[CKRecordZone.ID(zoneName: parts[1], ownerName: parts[0])] = CKServerChangeToken(text: token)
            }
            unfetched = s.unfetchedZones.map(zoneID)
            recordChanges = s.pendingRecordZoneChanges.compactMap { c in
                guard let name = c.recordName else { return nil }
                let id = CKRecord.ID(recordName: name, zoneID: zoneID(c.zone))
                return c.kind == "deleteRecord" ? .deleteRecord(id) : .saveRecord(id)
            }
            databaseChanges = s.pendingDatabaseChanges.map { c in
                c.kind == "deleteZone" ? .deleteZone(zoneID(c.zone)) : .saveZone(CKRecordZone(zoneID: zoneID(c.zone)))
            }
            untracked = s.hasPendingUntrackedChanges
            user = s.userRecordName
        }

        /// The record changes to send, oldest first; one per record.
        public var pendingRecordZoneChanges: [PendingRecordZoneChange] { lock.withLock { recordChanges } }
        /// The zone changes to send, oldest first; one per zone.
        public var pendingDatabaseChanges: [PendingDatabaseChange] { lock.withLock { databaseChanges } }

        /// Set by an app that keeps its own list of changes: the engine then asks it for a
        /// batch at its next send.
        public var hasPendingUntrackedChanges: Bool {
            get { lock.withLock { untracked } }
            set {
                lock.withLock { untracked = newValue }
                onChange?(true)
            }
        }

        /// Zones the last database fetch found changed whose records are not fetched yet.
        public var zoneIDsWithUnfetchedServerChanges: [CKRecordZone.ID] { lock.withLock { unfetched } }

        /// Adds changes to send. A record has one pending change: saving it again keeps its
        /// place, and a delete replaces a save (and a save a delete).
        public func add(pendingRecordZoneChanges changes: [PendingRecordZoneChange]) {
            lock.withLock {
                for change in changes {
                    lastVersion += 1
                    versions[change] = lastVersion
                    guard !recordChanges.contains(change) else { continue }
                    recordChanges.removeAll { $0.recordID == change.recordID }
                    recordChanges.append(change)
                }
            }
            onChange?(true)
        }

        public func remove(pendingRecordZoneChanges changes: [PendingRecordZoneChange]) {
            let gone = Set(changes)
            lock.withLock {
                recordChanges.removeAll { gone.contains($0) }
                for change in gone { versions[change] = nil }
            }
            onChange?(true)
        }

        /// Adds zone changes to send, one per zone as for records.
        public func add(pendingDatabaseChanges changes: [PendingDatabaseChange]) {
            lock.withLock {
                for change in changes where !databaseChanges.contains(change) {
                    databaseChanges.removeAll { $0.zoneID == change.zoneID }
                    databaseChanges.append(change)
                }
            }
            onChange?(true)
        }

        public func remove(pendingDatabaseChanges changes: [PendingDatabaseChange]) {
            let gone = Set(changes)
            lock.withLock { databaseChanges.removeAll { gone.contains($0) } }
            onChange?(true)
        }

        // MARK: The engine's side

        var serialization: Serialization {
            lock.withLock {
                func zone(_ id: CKRecordZone.ID) -> Serialization.Zone { .init(name: id.zoneName, owner: id.ownerName) }
                var s = Serialization()
                s.databaseToken = databaseToken?.text
                for (id, token) in zoneTokens { s.zoneTokens[id.ownerName + "\n" + id.zoneName] = token.text }
                s.unfetchedZones = unfetched.map(zone)
                s.pendingRecordZoneChanges = recordChanges.map { c in
                    switch c {
                    case .saveRecord(let id): .init(kind: "saveRecord", zone: zone(id.zoneID), recordName: id.recordName)
                    case .deleteRecord(let id): .init(kind: "deleteRecord", zone: zone(id.zoneID), recordName: id.recordName)
                    }
                }
                s.pendingDatabaseChanges = databaseChanges.map { c in
                    switch c {
                    case .saveZone(let z): .init(kind: "saveZone", zone: zone(z.zoneID))
                    case .deleteZone(let id): .init(kind: "deleteZone", zone: zone(id))
                    }
                }
                s.hasPendingUntrackedChanges = untracked
                s.userRecordName = user
                return s
            }
        }

        var fetchedDatabaseToken: CKServerChangeToken? {
            get { lock.withLock { databaseToken } }
            set { lock.withLock { databaseToken = newValue } }
        }

        func token(of zone: CKRecordZone.ID) -> CKServerChangeToken? { lock.withLock { zoneTokens[zone] } }

        func setToken(_ token: CKServerChangeToken?, of zone: CKRecordZone.ID) { lock.withLock { zoneTokens[zone] = token } }

        /// Notes zones a database fetch found changed (`changed`) or deleted.
        func noteZones(changed: [CKRecordZone.ID], deleted: [CKRecordZone.ID]) {
            lock.withLock {
                for id in changed where !unfetched.contains(id) { unfetched.append(id) }
                unfetched.removeAll { deleted.contains($0) }
                for id in deleted { zoneTokens[id] = nil }
            }
        }

        func noteFetched(_ zone: CKRecordZone.ID) { lock.withLock { unfetched.removeAll { $0 == zone } } }

        /// When each pending record change was last added, as a batch is asked for.
        func recordChangeVersions() -> [PendingRecordZoneChange: Int] { lock.withLock { versions } }

        /// Drops sent record changes (and failed ones, which the app handles and may add
        /// again) without telling the app (the engine sends one `stateUpdate` for the batch);
        /// with `asked`, not one added again since.
        func drop(recordChanges done: Set<PendingRecordZoneChange>, unlessAddedSince asked: [PendingRecordZoneChange: Int]?) {
            lock.withLock {
                recordChanges.removeAll { done.contains($0) && (asked == nil || asked?[$0] == versions[$0]) }
                for change in done where !recordChanges.contains(change) { versions[change] = nil }
            }
        }

        func drop(databaseChanges done: Set<PendingDatabaseChange>) {
            lock.withLock { databaseChanges.removeAll { done.contains($0) } }
        }

        func clearUntracked() { lock.withLock { untracked = false } }

        var userRecordName: String? { lock.withLock { user } }

        /// Starts again for `user`: nothing fetched, nothing pending (as Apple's engine does
        /// when the account changes).
        func reset(for newUser: String) {
            lock.withLock {
                if user != nil {
                    (recordChanges, databaseChanges, untracked, versions) = ([], [], false, [:])
                    (databaseToken, zoneTokens, unfetched) = (nil, [:], [])
                }
                user = newUser
            }
        }
    }
}
