import CloudKit
import CloudStore
import Testing
import TestSupport

/// Asking for access to a share (iOS 26) and one-time share URLs (iOS 18), as CloudKit code
/// does them with `import CloudKit` alone: the owner lets users ask, answers each request by
/// adding, denying or blocking, and hands out a URL that one user, whoever opens it first,
/// takes a participant's place with.
@Suite struct ShareAccessRequestTests {
    /// A store with an owner, olivia, whose "Lists" zone holds a list, and three other users.
    struct Fixture {
        let olivia: CKContainer, bob: CKContainer, carol: CKContainer, dave: CKContainer
        let list: CKRecord

        init() async throws {
            let path = TemporaryStores.path("ckfs-access-requests-")
            let store = try Store.create(at: path)
            for name in ["olivia", "bob", "carol", "dave"] { try store.container().addUser(name, emails: ["\(name)@example.com"]) }
            olivia = try CKContainer(store: store, user: "olivia", deviceID: "olivia-phone")
            bob = try CKContainer(store: Store.open(at: path), user: "bob", deviceID: "bob-phone")
            carol = try CKContainer(store: Store.open(at: path), user: "carol", deviceID: "carol-phone")
            dave = try CKContainer(store: Store.open(at: path), user: "dave", deviceID: "dave-phone")
            let zone = CKRecordZone(zoneName: "Lists")
            _ = try await olivia.privateCloudDatabase.save(zone)
            list = CKRecord(recordType: "List", recordID: CKRecord.ID(recordName: "groceries", zoneID: zone.zoneID))
            list["title"] = "Groceries"
        }

        /// Shares the list, `change` made to the new share first; the share as saved.
        func share(_ change: (CKShare) -> Void = { _ in }) async throws -> CKShare {
            let share = CKShare(rootRecord: list)
            change(share)
            let (saved, _) = try await olivia.privateCloudDatabase.modifyRecords(saving: [list, share], deleting: [])
            return try #require(try saved[share.recordID]?.get() as? CKShare)
        }

        /// The share as its owner fetches it now.
        func ownersCopy(_ share: CKShare) async throws -> CKShare {
            try #require(try await olivia.privateCloudDatabase.record(for: share.recordID) as? CKShare)
        }

        /// Saves the owner's copy as `CKModifyRecordsOperation` does by default (the save fails
        /// if the share changed since it was read).
        func save(_ share: CKShare, policy: CKModifyRecordsOperation.RecordSavePolicy = .ifServerRecordUnchanged) async throws -> CKShare {
            let (saved, _) = try await olivia.privateCloudDatabase.modifyRecords(saving: [share], deleting: [], savePolicy: policy)
            return try #require(try saved[share.recordID]?.get() as? CKShare)
        }

        /// The owner's participant for a requester, found as Apple's pages say: by its lookup info.
        func participant(for requester: CKShare.AccessRequester) async throws -> CKShare.Participant {
            let lookup = CKFetchShareParticipantsOperation(userIdentityLookupInfos: [requester.participantLookupInfo])
            let found = Locked<CKShare.Participant?>(nil)
            lookup.perShareParticipantResultBlock = { _, result in found.withLock { $0 = try? result.get() } }
            await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
                lookup.completionBlock = { done.resume() }
                olivia.add(lookup)
            }
            return try #require(found.withLock { $0 })
        }
    }

    static func code(_ result: Result<Void, any Error>?) -> CKError.Code? {
        if case .failure(let e)? = result { return (e as? CKError)?.code }
        return nil
    }

    @Test func theOwnerAddsDeniesAndBlocksWhoAsks() async throws {
        let f = try await Fixture()
        let share = try await f.share { $0.allowsAccessRequests = true }
        #expect(share.allowsAccessRequests)
        let url = try #require(share.url)

        // Bob asks twice (once is kept); carol asks with the operation.
        let bobStart = Date()
        for _ in 0..<2 { #expect(try await f.bob.requestShareAccess(for: [url])[url].map { (try? $0.get()) != nil } == true) }
        let operation = CKShareRequestAccessOperation(shareURLs: [url])
        let answered = Locked<Result<Void, any Error>?>(nil)
        let ended = Locked<Result<Void, any Error>?>(nil)
        operation.perShareAccessRequestResultBlock = { _, result in answered.withLock { $0 = result } }
        operation.shareAccessRequestResultBlock = { result in ended.withLock { $0 = result } }
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            operation.completionBlock = { done.resume() }
            f.carol.add(operation)
        }
        #expect((try? answered.withLock { $0 }?.get()) != nil)
        #expect((try? ended.withLock { $0 }?.get()) != nil)
        // Asking gives no access: bob cannot open the share yet.
        await #expect(throws: CKError.self) { _ = try await f.bob.shareMetadata(for: url) }

        // The owner sees both, and approves bob and denies carol in one save.
        var copy = try await f.ownersCopy(share)
        #expect(copy.requesters.map { $0.userIdentity.lookupInfo?.emailAddress } == ["bob@example.com", "carol@example.com"])
        let bobRequest = try #require(copy.requesters.first { $0.participantLookupInfo.emailAddress == "bob@example.com" })
        let carolRequest = try #require(copy.requesters.first { $0.participantLookupInfo.emailAddress == "carol@example.com" })
        // Requesters are kept as apps keep what they show: archived, they come back equal.
        let data = try NSKeyedArchiver.archivedData(withRootObject: [bobRequest, carolRequest] as NSArray, requiringSecureCoding: true)
        let archived = try NSKeyedUnarchiver.unarchivedObject(ofClasses: [NSArray.self, CKShare.AccessRequester.self], from: data) as? [CKShare.AccessRequester]
        #expect(archived == [bobRequest, carolRequest])
        copy.addParticipant(try await f.participant(for: bobRequest))
        copy.denyRequesters([carolRequest])
        copy = try await f.save(copy)
        #expect(copy.requesters.isEmpty)
        let bobEntry = try #require(copy.participants.first { $0.userIdentity.lookupInfo?.emailAddress == "bob@example.com" })
        #expect(bobEntry.isApprovedRequester)
        #expect(bobEntry.acceptanceStatus == .pending)
        #expect(try #require(bobEntry.dateAddedToShare) >= bobStart.addingTimeInterval(-1))
        #expect(copy.owner.isApprovedRequester == false)

        // Bob accepts as any invited participant does, and his copy shows nothing of the
        // owner's: no requesters, no blocked users.
        let accepted = try await f.bob.accept(try await f.bob.shareMetadata(for: url))
        #expect(accepted.currentUserParticipant?.acceptanceStatus == .accepted)
        #expect(accepted.currentUserParticipant?.isApprovedRequester == true)

        // Denied, carol may ask again; blocked, she may not, until unblocked.
        _ = try await f.carol.requestShareAccess(for: [url])
        copy = try await f.ownersCopy(share)
        #expect(copy.requesters.count == 1)
        copy.blockRequesters(copy.requesters)
        copy = try await f.save(copy)
        #expect(copy.requesters.isEmpty)
        #expect(copy.blockedIdentities.map { $0.userIdentity.lookupInfo?.emailAddress } == ["carol@example.com"])
        let blockedAsk = try await f.carol.requestShareAccess(for: [url])[url]
        #expect(Self.code(blockedAsk) == .permissionFailure)
        let bobsView = try await f.bob.sharedCloudDatabase.record(for: accepted.recordID)
        #expect((bobsView as? CKShare)?.blockedIdentities.isEmpty == true, "only the owner sees who is blocked")
        copy.unblockIdentities(copy.blockedIdentities)
        copy = try await f.save(copy)
        #expect(copy.blockedIdentities.isEmpty)
        #expect((try? await f.carol.requestShareAccess(for: [url])[url]?.get()) != nil)
        #expect(try await f.ownersCopy(share).requesters.count == 1)
    }

    @Test func aShareThatTakesNoRequestsAnswersAsIfItWereNotThere() async throws {
        let f = try await Fixture()
        let share = try await f.share()
        #expect(share.allowsAccessRequests == false)
        let url = try #require(share.url)
        #expect(Self.code(try await f.dave.requestShareAccess(for: [url])[url]) == .unknownItem)
        let nowhere = try #require(URL(string: url.absoluteString.dropLast(4) + "zzzz"))
        #expect(Self.code(try await f.dave.requestShareAccess(for: [nowhere])[nowhere]) == .unknownItem)
        #expect(try await f.ownersCopy(share).requesters.isEmpty)
    }

    /// A request made after the owner read the share outlives the owner's save of that copy,
    /// even by a policy that overwrites the share: the owner never saw it, so never answered it.
    @Test func aRequestTheOwnerDidNotSeeOutlivesTheirSave() async throws {
        let f = try await Fixture()
        let share = try await f.share { $0.allowsAccessRequests = true }
        let url = try #require(share.url)
        _ = try await f.carol.requestShareAccess(for: [url])
        let copy = try await f.ownersCopy(share)
        _ = try await f.dave.requestShareAccess(for: [url])
        copy.denyRequesters(copy.requesters)
        // The default policy refuses the stale copy, as CloudKit's does.
        await #expect(throws: CKError.self) { _ = try await f.save(copy) }
        let saved = try await f.save(copy, policy: .allKeys)
        #expect(saved.requesters.map { $0.participantLookupInfo.emailAddress } == ["dave@example.com"])
    }

    @Test func aOneTimeURLLetsTheFirstUserWhoOpensItIn() async throws {
        let f = try await Fixture()
        let invite = CKShare.Participant.oneTimeURLParticipant()
        invite.permission = .readWrite
        #expect(invite.userIdentity.userRecordID == nil && invite.userIdentity.lookupInfo == nil)
        let share = try await f.share { $0.addParticipant(invite) }
        #expect(CKShare(rootRecord: f.list).oneTimeURL(for: invite.participantID) == nil, "no URL before the share is saved")
        let url = try #require(share.oneTimeURL(for: invite.participantID))
        #expect(url != share.url)
        #expect(share.oneTimeURL(for: share.owner.participantID) == nil)

        // Dave, whom nobody invited by name, opens it and accepts; he takes that place. Carol
        // opened it too, but accepts after him.
        let carolsMetadata = try await f.carol.shareMetadata(for: url)
        let metadata = try await f.dave.shareMetadata(for: url)
        #expect(metadata.participantStatus == .pending)
        #expect(metadata.participantPermission == .readWrite)
        #expect(metadata.share.oneTimeURL(for: invite.participantID) == nil, "the secret is the owner's")
        let accepted = try await f.dave.accept(metadata)
        #expect(accepted.currentUserParticipant?.participantID == invite.participantID)
        #expect(accepted.currentUserParticipant?.permission == .readWrite)
        let zoneID = accepted.recordID.zoneID
        #expect(try await f.dave.sharedCloudDatabase.record(for: CKRecord.ID(recordName: "groceries", zoneID: zoneID))["title"] as? String == "Groceries")

        // The owner's copy names him in that place; the URL stays the same.
        let copy = try await f.ownersCopy(share)
        let place = try #require(copy.participants.first { $0.participantID == invite.participantID })
        #expect(place.userIdentity.lookupInfo?.emailAddress == "dave@example.com")
        #expect(place.acceptanceStatus == .accepted)
        #expect(copy.oneTimeURL(for: invite.participantID) == url)

        // Once used, it lets nobody else in; the share's own URL still does not let carol in.
        let late = await #expect(throws: CKError.self) { _ = try await f.carol.accept(carolsMetadata) }
        #expect(late?.code == .permissionFailure)
        await #expect(throws: CKError.self) { _ = try await f.carol.shareMetadata(for: url) }
        await #expect(throws: CKError.self) { _ = try await f.carol.shareMetadata(for: try #require(share.url)) }
        #expect(try await f.ownersCopy(share).participants.count == 2)

        // Removed from the share, the place and its URL are gone.
        copy.removeParticipant(place)
        _ = try await f.save(copy)
        await #expect(throws: CKError.self) { _ = try await f.dave.shareMetadata(for: url) }
    }
}
