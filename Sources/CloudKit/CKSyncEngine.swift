import Foundation
import CloudStore

/// Apple's sync engine: it keeps a database's changes and the app's in step. `fetchChanges`
/// fetches what changed since the last fetch (the zones, then each changed zone's records) and
/// hands it to the delegate as events; `sendChanges` sends the zone changes pending in `state`,
/// then the batches of record changes the delegate gives, and reports each as an event.
///
/// One sync runs at a time and events come one at a time, in Apple's order. With
/// `automaticallySync` the engine fetches when it starts and when the database changes (it
/// looks every `pollInterval`; there are no pushes), and sends soon after changes are added
/// to its state.
///
/// `@unchecked Sendable`: its stored properties are `let`s, behind `lock`, or (`delegate`, a
/// weak reference) set once in `init`.
public final class CKSyncEngine: @unchecked Sendable, CustomStringConvertible {
    /// How an engine is made.
    public struct Configuration: Sendable, CustomStringConvertible {
        public var database: CKDatabase
        /// The state a previous engine's `stateUpdate` gave; nil the first time.
        public var stateSerialization: State.Serialization?
        /// Held weakly by the engine, as Apple's is: the app keeps it.
        public var delegate: any CKSyncEngineDelegate
        /// Whether the engine syncs on its own; false leaves every sync to `fetchChanges` and
        /// `sendChanges` (tests do that).
        public var automaticallySync = true
        /// The ID of the subscription the engine listens with (kept for Apple's shape; ckfs's
        /// engine looks for changes itself).
        public var subscriptionID: CKSubscription.ID?

        public init(database: CKDatabase, stateSerialization: State.Serialization?, delegate: any CKSyncEngineDelegate) {
            self.database = database
            self.stateSerialization = stateSerialization
            self.delegate = delegate
        }

        public var description: String { "Configuration(\(database.databaseScope), automaticallySync: \(automaticallySync))" }
    }

    public let database: CKDatabase
    public let state: State
    private weak var delegate: (any CKSyncEngineDelegate)?
    private let automaticallySync: Bool
    /// Runs one sync at a time, and so one event at a time.
    private let gate = SerialGate()
    /// Guards the five below.
    private let lock = NSLock()
    /// Whether a scheduled send is already on its way.
    private var sendScheduled = false
    /// Whether a `stateUpdate` for the app's changes is on its way.
    private var stateUpdateScheduled = false
    /// The automatic-sync task, cancelled with the engine or by `cancelOperations()`.
    private var poller: Task<Void, Never>?
    private var cancelled = false
    /// Whether the delegate has heard of the account.
    private var accountChecked = false

    /// How often an automatically syncing engine looks for changes in the database.
    static let pollInterval: Duration = .seconds(2)

    public init(_ configuration: Configuration) {
        database = configuration.database
        state = State(configuration.stateSerialization)
        delegate = configuration.delegate
        automaticallySync = configuration.automaticallySync
        state.onChange = { [weak self] byApp in
            guard let self, byApp else { return }
            self.scheduleStateUpdate()
            if self.automaticallySync { self.scheduleSend() }
        }
        if automaticallySync { startPolling() } else { Task { [weak self] in await self?.announceAccount() } }
    }

    deinit { lock.withLock { poller }?.cancel() }

    public var description: String { "<CKSyncEngine \(database.databaseScope)>" }

    // MARK: Fetching

    /// Fetches every change since the last fetch and hands it to the delegate; returns once
    /// the delegate has handled every event. Throws when the database's changes cannot be
    /// read (a zone that cannot be read is reported in its `didFetchRecordZoneChanges`).
    public func fetchChanges(_ options: FetchChangesOptions = .init()) async throws {
        try await fetch(options, reason: .manual)
    }

    private func fetch(_ options: FetchChangesOptions, reason: SyncReason) async throws {
        try await exclusive { delegate in
            if reason == .scheduled, self.lock.withLock({ self.cancelled }) { return }
            let context = FetchChangesContext(reason: reason, options: options)
            await delegate.handleEvent(.willFetchChanges(.init(context: context)), syncEngine: self)
            do {
                try await self.fetchDatabaseChanges(delegate)
                var options = options
                var tried: Set<CKRecordZone.ID> = []
                while true {
                    options = await delegate.nextFetchChangesOptions(FetchChangesContext(reason: reason, options: options), syncEngine: self)
                    let waiting = self.state.zoneIDsWithUnfetchedServerChanges.filter { options.scope.contains($0) && !tried.contains($0) }
                    guard let zone = waiting.first(where: options.prioritizedZoneIDs.contains) ?? waiting.first else { break }
                    tried.insert(zone)
                    await self.fetchZone(zone, delegate)
                }
            } catch {
                await delegate.handleEvent(.didFetchChanges(.init(context: context)), syncEngine: self)
                throw error
            }
            await delegate.handleEvent(.didFetchChanges(.init(context: context)), syncEngine: self)
        }
    }

    /// The zones changed and deleted since the last fetch, page by page.
    private func fetchDatabaseChanges(_ delegate: any CKSyncEngineDelegate) async throws {
        var more = true
        while more {
            let page = try await database.databaseChanges(since: state.fetchedDatabaseToken)
            more = page.moreComing
            // The default zone keeps no change history in CloudKit: only custom zones sync.
            state.noteZones(changed: page.modifications.map(\.zoneID).filter { $0.zoneName != CKRecordZone.ID.defaultZoneName },
                            deleted: page.deletions.map(\.zoneID))
            state.fetchedDatabaseToken = page.changeToken
            if !page.modifications.isEmpty || !page.deletions.isEmpty {
                await delegate.handleEvent(.fetchedDatabaseChanges(.init(modifications: page.modifications, deletions: page.deletions)), syncEngine: self)
            }
            await stateUpdate(delegate)
        }
    }

    /// One zone's records changed since its last fetch, page by page, between its will- and
    /// did-fetch events.
    private func fetchZone(_ zone: CKRecordZone.ID, _ delegate: any CKSyncEngineDelegate) async {
        await delegate.handleEvent(.willFetchRecordZoneChanges(.init(zoneID: zone)), syncEngine: self)
        var failure: CKError?
        var more = true
        var expired = false
        while more {
            do {
                let page = try await database.recordZoneChanges(inZoneWith: zone, since: state.token(of: zone))
                more = page.moreComing
                let modifications = page.modificationResultsByID.values.compactMap { try? $0.get() }
                    .sorted { $0.record.recordID.recordName < $1.record.recordID.recordName }
                state.setToken(page.changeToken, of: zone)
                if !modifications.isEmpty || !page.deletions.isEmpty {
                    await delegate.handleEvent(.fetchedRecordZoneChanges(.init(modifications: modifications, deletions: page.deletions)), syncEngine: self)
                }
            } catch {
                let e = Self.ckError(error)
                // A token from before the zone was made again (or older than its history):
                // the zone is fetched whole, once.
                if e.code == .changeTokenExpired && !expired {
                    expired = true
                    state.setToken(nil, of: zone)
                    continue
                }
                failure = e
                more = false
            }
        }
        if failure == nil || failure?.code == .zoneNotFound { state.noteFetched(zone) }
        await stateUpdate(delegate)
        await delegate.handleEvent(.didFetchRecordZoneChanges(.init(zoneID: zone, error: failure)), syncEngine: self)
    }

    // MARK: Sending

    /// Sends the pending zone changes, then the delegate's batches of record changes until it
    /// gives none, and reports each as an event; returns once the delegate has handled them.
    /// Throws `partialFailure` when a change failed (reported in its `sent…` event and
    /// dropped from `state`, for the delegate to handle and add again): the send stops after
    /// that batch, so a change the delegate adds again goes at the next send.
    public func sendChanges(_ options: SendChangesOptions = .init()) async throws {
        try await send(options, reason: .manual)
    }

    private func send(_ options: SendChangesOptions, reason: SyncReason) async throws {
        try await exclusive { delegate in
            if reason == .scheduled {
                // The next change schedules another send from now on; none after a cancel.
                guard self.lock.withLock({ () -> Bool in
                    self.sendScheduled = false
                    return !self.cancelled
                }) else { return }
            }
            let context = SendChangesContext(reason: reason, options: options)
            await delegate.handleEvent(.willSendChanges(.init(context: context)), syncEngine: self)
            var failures: [CKItemID: CKError] = [:]
            do {
                while failures.isEmpty {
                    failures.merge(try await self.sendDatabaseChanges(options, delegate)) { a, _ in a }
                    guard failures.isEmpty else { break }
                    self.state.clearUntracked()
                    // A change the app adds again while its batch is out stays pending.
                    let asked = self.state.recordChangeVersions()
                    guard let batch = await delegate.nextRecordZoneChangeBatch(context, syncEngine: self),
                          !batch.recordsToSave.isEmpty || !batch.recordIDsToDelete.isEmpty else { break }
                    failures.merge(try await self.sendBatch(batch, asked: asked, delegate)) { a, _ in a }
                }
            } catch {
                await delegate.handleEvent(.didSendChanges(.init(context: context)), syncEngine: self)
                throw error
            }
            await delegate.handleEvent(.didSendChanges(.init(context: context)), syncEngine: self)
            guard failures.isEmpty else {
                let first = failures.sorted { "\($0.key)" < "\($1.key)" }[0]
                var error = CKError(.partialFailure, "\(failures.count) change\(failures.count == 1 ? "" : "s") failed, each reported in its sentRecordZoneChanges or sentDatabaseChanges event; \(first.key): \(first.value.code.name): \(first.value.message)")
                error.partialErrors = failures
                throw error
            }
        }
    }

    /// The pending zone changes in scope, sent together; their failures by zone.
    private func sendDatabaseChanges(_ options: SendChangesOptions, _ delegate: any CKSyncEngineDelegate) async throws -> [CKItemID: CKError] {
        let pending = state.pendingDatabaseChanges.filter { options.scope.contains(zone: $0.zoneID) }
        guard !pending.isEmpty else { return [:] }
        var saving: [CKRecordZone] = []
        var deleting: [CKRecordZone.ID] = []
        for change in pending {
            switch change {
            case .saveZone(let zone): saving.append(zone)
            case .deleteZone(let id): deleting.append(id)
            }
        }
        let results = CKDatabase.modifyZones(try database.engine(), saving: saving, deleting: deleting)
        var saved: [CKRecordZone] = [], failedSaves: [Event.SentDatabaseChanges.FailedZoneSave] = []
        var deleted: [CKRecordZone.ID] = [], failedDeletes: [CKRecordZone.ID: CKError] = [:]
        var failures: [CKItemID: CKError] = [:]
        for zone in saving {
            switch results.saveResults[zone.zoneID] {
            case .success(let z)?: saved.append(z)
            case .failure(let e)?:
                let error = Self.ckError(e)
                failedSaves.append(.init(zone: zone, error: error))
                failures[.zone(zone.zoneID.engine)] = error
            case nil: break
            }
        }
        for id in deleting {
            switch results.deleteResults[id] {
            case .success?: deleted.append(id)
            case .failure(let e)?:
                let error = Self.ckError(e)
                // A zone already gone is deleted, as far as the app is concerned.
                if error.code == .zoneNotFound { deleted.append(id); continue }
                failedDeletes[id] = error
                failures[.zone(id.engine)] = error
            case nil: break
            }
        }
        state.drop(databaseChanges: Set(pending))
        // Records of a deleted zone are gone with it: their pending changes go too.
        let gone = Set(deleted)
        state.drop(recordChanges: Set(state.pendingRecordZoneChanges.filter { gone.contains($0.recordID.zoneID) }), unlessAddedSince: nil)
        await delegate.handleEvent(.sentDatabaseChanges(.init(savedZones: saved, failedZoneSaves: failedSaves, deletedZoneIDs: deleted,
                                                              failedZoneDeletes: failedDeletes)), syncEngine: self)
        await stateUpdate(delegate)
        return failures
    }

    /// One batch of record changes, saved unless the stored record changed since the app's
    /// version; its failures by record.
    private func sendBatch(_ batch: RecordZoneChangeBatch, asked: [PendingRecordZoneChange: Int],
                           _ delegate: any CKSyncEngineDelegate) async throws -> [CKItemID: CKError] {
        let result = try await database.modifyRecords(saving: batch.recordsToSave, deleting: batch.recordIDsToDelete,
                                                      savePolicy: .ifServerRecordUnchanged, atomically: batch.atomicByZone)
        var saved: [CKRecord] = [], failedSaves: [Event.SentRecordZoneChanges.FailedRecordSave] = []
        var deleted: [CKRecord.ID] = [], failedDeletes: [CKRecord.ID: CKError] = [:]
        var failures: [CKItemID: CKError] = [:]
        var done: Set<PendingRecordZoneChange> = []
        for record in batch.recordsToSave {
            done.insert(.saveRecord(record.recordID))
            switch result.saveResults[record.recordID] {
            case .success(let r)?: saved.append(r)
            case .failure(let e)?:
                let error = Self.ckError(e)
                failedSaves.append(.init(record: record, error: error))
                failures[.record(record.recordID.engine)] = error
            case nil: break
            }
        }
        for id in batch.recordIDsToDelete {
            done.insert(.deleteRecord(id))
            switch result.deleteResults[id] {
            case .success?: deleted.append(id)
            case .failure(let e)?:
                let error = Self.ckError(e)
                // A record already gone is deleted, as far as the app is concerned.
                if error.code == .unknownItem { deleted.append(id); continue }
                failedDeletes[id] = error
                failures[.record(id.engine)] = error
            case nil: break
            }
        }
        state.drop(recordChanges: done, unlessAddedSince: asked)
        await delegate.handleEvent(.sentRecordZoneChanges(.init(savedRecords: saved, failedRecordSaves: failedSaves, deletedRecordIDs: deleted,
                                                                failedRecordDeletes: failedDeletes)), syncEngine: self)
        await stateUpdate(delegate)
        return failures
    }

    /// An item's error as CloudKit's (the engine's are already).
    private static func ckError(_ error: any Error) -> CKError { error as? CKError ?? CKError(_nsError: error as NSError) }

    // MARK: Cancelling and syncing on its own

    /// Stops syncing on its own; a sync under way finishes.
    public func cancelOperations() async {
        lock.withLock {
            cancelled = true
            poller?.cancel()
            poller = nil
        }
    }

    /// Tells the delegate the state as it is now, to keep.
    private func stateUpdate(_ delegate: any CKSyncEngineDelegate) async {
        await delegate.handleEvent(.stateUpdate(.init(stateSerialization: state.serialization)), syncEngine: self)
    }

    /// Lets the delegate hear of the account before any sync is asked for.
    private func announceAccount() async {
        try? await exclusive { _ in }
    }

    /// Runs `body` alone (no other sync or event meanwhile), with the delegate, once the
    /// delegate has heard of the account: nothing when the delegate is gone.
    private func exclusive(_ body: (any CKSyncEngineDelegate) async throws -> Void) async throws {
        await gate.enter()
        do {
            if let delegate {
                await checkAccount(delegate)
                try await body(delegate)
            }
        } catch {
            await gate.leave()
            throw error
        }
        await gate.leave()
    }

    /// Tells the delegate once which account the engine syncs for: `signIn` for a state that
    /// is new, `switchAccounts` (and a state made new) for one another user's engine kept.
    private func checkAccount(_ delegate: any CKSyncEngineDelegate) async {
        guard lock.withLock({ () -> Bool in
            defer { accountChecked = true }
            return !accountChecked
        }) else { return }
        guard let current = try? await database.container.userRecordID() else { return }
        let previous = state.userRecordName
        guard previous != current.recordName else { return }
        state.reset(for: current.recordName)
        let change: Event.AccountChange.ChangeType = previous.map {
            .switchAccounts(previousUser: CKRecord.ID(recordName: $0), currentUser: current)
        } ?? .signIn(currentUser: current)
        await delegate.handleEvent(.accountChange(.init(changeType: change)), syncEngine: self)
        await stateUpdate(delegate)
    }

    /// Sends a `stateUpdate` after the app changed the state: one for changes made before it
    /// is delivered, with the state as it is then (not as it was when the change was made).
    private func scheduleStateUpdate() {
        guard lock.withLock({ () -> Bool in
            defer { stateUpdateScheduled = true }
            return !stateUpdateScheduled
        }) else { return }
        Task { [weak self] in
            try? await self?.exclusive { delegate in
                guard let self else { return }
                self.lock.withLock { self.stateUpdateScheduled = false }
                await self.stateUpdate(delegate)
            }
        }
    }

    /// Sends soon, once, after changes are added to the state: changes added until that send
    /// starts go with it.
    private func scheduleSend() {
        let go = lock.withLock { () -> Bool in
            guard !sendScheduled, !cancelled else { return false }
            sendScheduled = true
            return true
        }
        guard go else { return }
        Task { [weak self] in
            try? await Task.sleep(for: .milliseconds(100))
            try? await self?.send(.init(), reason: .scheduled)
        }
    }

    /// Fetches at once, then whenever the database has changed since the last fetch.
    private func startPolling() {
        let task = Task { [weak self] in
            while !Task.isCancelled {
                guard let self else { return }
                if (try? await self.hasUnfetchedChanges()) == true {
                    try? await self.fetch(.init(), reason: .scheduled)
                }
                try? await Task.sleep(for: Self.pollInterval)
            }
        }
        lock.withLock { poller = task }
    }

    private func hasUnfetchedChanges() async throws -> Bool {
        if !state.zoneIDsWithUnfetchedServerChanges.isEmpty || state.fetchedDatabaseToken == nil { return true }
        let page = try await database.databaseChanges(since: state.fetchedDatabaseToken, resultsLimit: 1)
        return !page.modifications.isEmpty || !page.deletions.isEmpty
    }
}

/// Lets one task at a time in, in the order they came (an actor alone lets others in at each
/// of its awaits).
private actor SerialGate {
    private var busy = false
    private var waiting: [CheckedContinuation<Void, Never>] = []

    func enter() async {
        guard busy else {
            busy = true
            return
        }
        await withCheckedContinuation { waiting.append($0) }
    }

    func leave() {
        if waiting.isEmpty { busy = false } else { waiting.removeFirst().resume() }
    }
}
