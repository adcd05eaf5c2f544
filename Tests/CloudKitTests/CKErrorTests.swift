import CloudKit
import Testing
import TestSupport

/// CKError as CloudKit code handles it, with `import CloudKit` alone: Apple's codes and
/// numbers, the `NSError` form in `CKErrorDomain` with its `userInfo` keys, partial failures
/// keyed by the IDs the caller wrote, and the conflict's records as objects that stay the same.
@Suite struct CKErrorTests {
    /// The retry helper apps write: transient codes are retried after `retryAfterSeconds`.
    static func retryDelay(_ error: Error) -> Double? {
        guard let error = error as? CKError else { return nil }
        switch error.code {
        case .networkUnavailable, .networkFailure, .serviceUnavailable, .requestRateLimited, .zoneBusy:
            return error.retryAfterSeconds ?? 1
        case .accountTemporarilyUnavailable:
            return 30
        default:
            return nil
        }
    }

    @Test func codesHaveApplesNumbersAndClassifyAsRetryLogicExpects() {
        // Apple's numbers (CKError.h): code in an NSError is compared by them.
        let numbers: [(CKError.Code, Int)] = [
            (.internalError, 1), (.partialFailure, 2), (.networkUnavailable, 3), (.networkFailure, 4),
            (.serviceUnavailable, 6), (.requestRateLimited, 7), (.notAuthenticated, 9), (.unknownItem, 11),
            (.resultsTruncated, 13), (.serverRecordChanged, 14), (.assetFileModified, 17), (.operationCancelled, 20),
            (.changeTokenExpired, 21), (.batchRequestFailed, 22), (.zoneBusy, 23), (.quotaExceeded, 25),
            (.zoneNotFound, 26), (.limitExceeded, 27), (.userDeletedZone, 28), (.referenceViolation, 31),
            (.serverResponseLost, 34), (.accountTemporarilyUnavailable, 36), (.participantAlreadyInvited, 37),
        ]
        for (code, number) in numbers {
            #expect(code.rawValue == number, "\(code)")
            #expect(CKError.Code(rawValue: number) == code)
        }
        #expect(CKError.Code(rawValue: 0) == nil)
        #expect(CKError.Code(rawValue: 999) == nil)

        let limited = CKError(.requestRateLimited, userInfo: [CKErrorRetryAfterKey: NSNumber(value: 3.5)])
        #expect(Self.retryDelay(limited) == 3.5)
        #expect(Self.retryDelay(CKError(.zoneBusy)) == 1)
        #expect(Self.retryDelay(CKError(.accountTemporarilyUnavailable)) == 30)
        #expect(Self.retryDelay(CKError(.unknownItem)) == nil)
        #expect(CKError.zoneBusy == .zoneBusy && CKError.userDeletedZone == .userDeletedZone)
    }

    @Test func anErrorBridgesToNSErrorInCloudKitsDomainAndBack() async throws {
        let db = try ImportCloudKitTests.container().privateCloudDatabase
        var caught: Error?
        do { _ = try await db.record(for: CKRecord.ID(recordName: "missing")) } catch { caught = error }
        let error = try #require(caught)
        let ns = error as NSError
        #expect(ns.domain == CKErrorDomain)
        #expect(ns.code == CKError.Code.unknownItem.rawValue)
        #expect((ns.userInfo[NSLocalizedDescriptionKey] as? String)?.contains("missing") == true)
        #expect(ns.localizedDescription.contains("missing"))

        let back = CKError(_nsError: ns)
        #expect(back.code == .unknownItem)
        #expect(CKError.errorDomain == CKErrorDomain)
        // An error of another domain is an internal error that says where it came from.
        let foreign = CKError(_nsError: NSError(domain: NSPOSIXErrorDomain, code: 28, userInfo: nil))
        #expect(foreign.code == .internalError)
        #expect(foreign.localizedDescription.contains(NSPOSIXErrorDomain))
    }

    /// Partial failure handling by item ID: the IDs the caller made, a zone owned by
    /// `CKCurrentUserDefaultName` included, find their errors, in the error and its userInfo.
    @Test func partialErrorsAreKeyedByTheCallersIDs() async throws {
        let db = try ImportCloudKitTests.container().privateCloudDatabase
        let zoneID = CKRecordZone.ID(zoneName: "Work", ownerName: CKCurrentUserDefaultName)
        try await db.save(CKRecordZone(zoneID: zoneID))
        let existingID = CKRecord.ID(recordName: "taken", zoneID: zoneID)
        _ = try await db.save(CKRecord(recordType: "Note", recordID: existingID))

        let good = CKRecord(recordType: "Note", recordID: CKRecord.ID(recordName: "fresh", zoneID: zoneID))
        let clash = CKRecord(recordType: "Note", recordID: existingID)   // created anew: its tag is stale
        let op = CKModifyRecordsOperation(recordsToSave: [good, clash])
        op.isAtomic = false
        let perRecord = LockedList<CKRecord.ID>()
        op.perRecordSaveBlock = { id, _ in perRecord.append(id) }
        let error: Error? = await withCheckedContinuation { c in
            op.modifyRecordsCompletionBlock = { _, _, error in c.resume(returning: error) }
            db.add(op)
        }
        let partial = try #require(error as? CKError)
        #expect(partial.code == .partialFailure)
        let byID = try #require(partial.partialErrorsByItemID)
        let itemError = try #require(byID[existingID] as? CKError)
        #expect(itemError.code == .serverRecordChanged)
        #expect(byID[good.recordID] == nil)
        #expect(((partial as NSError).userInfo[CKPartialErrorsByItemIDKey] as? [AnyHashable: Error])?[existingID] != nil)
        #expect(Set(perRecord.items) == [good.recordID, existingID])

        // The async form keys its results the same way.
        let results = try await db.records(for: [existingID, CKRecord.ID(recordName: "absent", zoneID: zoneID)])
        #expect(try results[existingID]?.get().recordID.recordName == "taken")
        #expect(results.keys.contains(CKRecord.ID(recordName: "absent", zoneID: zoneID)))
    }

    /// The conflict's records come as objects: `serverRecord` read twice is one object (also
    /// under its userInfo key), so code that merges into it and saves it saves what it merged.
    @Test func theServerRecordIsOneObjectToMergeInto() async throws {
        let db = try ImportCloudKitTests.container().privateCloudDatabase
        let id = CKRecord.ID(recordName: "doc")
        let original = CKRecord(recordType: "Doc", recordID: id)
        original["title"] = "v1"
        let mine = try await db.save(original)
        let theirs = try await db.record(for: id)
        theirs["tags"] = ["theirs"]
        _ = try await db.save(theirs)

        mine["title"] = "mine"
        do {
            _ = try await db.save(mine)
            Issue.record("a stale save was accepted")
        } catch let error as CKError where error.code == .serverRecordChanged {
            let server = try #require(error.serverRecord)
            #expect(error.serverRecord === server)
            #expect(error.userInfo[CKRecordChangedErrorServerRecordKey] as? CKRecord === server)
            #expect(error.clientRecord?["title"] as? String == "mine")
            #expect(error.ancestorRecord?["title"] as? String == "v1")
            error.serverRecord?["title"] = error.clientRecord?["title"]   // merge, through the error again
            _ = try await db.save(server)
        }
        let stored = try await db.record(for: id)
        #expect(stored["title"] as? String == "mine")
        #expect(stored["tags"] as? [String] == ["theirs"])
    }
}

/// A list appended to from operation blocks, which run on the container's threads.
/// `@unchecked Sendable`: `values` is only touched under `lock`.
final class LockedList<T>: @unchecked Sendable {
    private let lock = NSLock()
    private var values: [T] = []
    func append(_ value: T) { lock.withLock { values.append(value) } }
    var items: [T] { lock.withLock { values } }
}
