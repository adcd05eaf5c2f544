import Foundation

/// The zones of a container's private databases that may hold shares, in one environment,
/// as the backend keeps them (``SharedZoneStorage``; the file backend's is
/// `<container>/<environment>/shared-zones.json`). Finding a share (by its URL, or a user's
/// shared zones) then reads those zones only, not every zone of every user.
///
/// It names every zone that holds a share, and perhaps some that no longer do: a save that
/// makes a share puts its zone in first, atomically, before it commits; nothing
/// takes a zone out (a stale name costs one look at a zone without shares, while taking one
/// out safely would need that zone's lock against a share being made there). Missing or not
/// readable, the list is made again from every zone, atomically, by whoever needs it first.
/// `ckfs fsck` adds any zone holding a share that the list lacks (a store restored from a copy
/// whose list is older than its zones).
struct ShareRegistry {
    typealias Entry = SharedZone

    let container: Container
    let environment: Environment

    /// Where the backend keeps the list.
    var storage: any SharedZoneStorage {
        container.store.backend.sharedZoneStorage(container: container.identifier, environment: environment)
    }

    /// The zones that may hold shares.
    func entries() throws(CKError) -> [Entry] {
        let storage = storage
        if let known = try storage.read() { return known }
        return try storage.update { (known) throws(CKError) -> ([Entry]?, [Entry]) in
            if let known { return (nil, known) }
            let found = try scan()
            return (found, found)
        }
    }

    /// Puts `zone` of `owner` in, before a save that may make a share there commits.
    func include(owner: String, zone: String) throws(CKError) {
        let entry = Entry(owner: owner, zone: zone)
        let storage = storage
        if try storage.read()?.contains(entry) == true { return }
        try storage.update { (known) throws(CKError) -> ([Entry]?, Void) in
            if known?.contains(entry) == true { return (nil, ()) }
            let base: [Entry]
            if let known { base = known } else { base = try scan() }
            return ((base + [entry]).uniqued(), ())
        }
    }

    /// Adds every zone holding a share that the list lacks, and returns them (`ckfs fsck`). An
    /// environment with no list and no share is left as it is.
    func repair() throws(CKError) -> [Entry] {
        let storage = storage
        if try storage.read() == nil, try scan().isEmpty { return [] }
        return try storage.update { (known) throws(CKError) -> ([Entry]?, [Entry]) in
            let missing = try scan().filter { known?.contains($0) != true }
            return (missing.isEmpty ? nil : ((known ?? []) + missing).uniqued(), missing)
        }
    }

    /// Every custom zone of every user's private database that holds a share now.
    private func scan() throws(CKError) -> [Entry] {
        var found: [Entry] = []
        for owner in try container.identities() {
            let db = try Database(container: container, scope: .shared, environment: environment, caller: .noAccount(), identity: nil,
                                  owner: owner.userRecordName)
            for zone in try db.zoneNames() where zone != ZoneID.defaultZoneName {
                if try !db.shareRecords(in: zone).isEmpty { found.append(Entry(owner: owner.userRecordName, zone: zone)) }
            }
        }
        return found
    }
}

extension Array where Element: Hashable & Comparable {
    /// The elements once each, sorted.
    fileprivate func uniqued() -> [Element] { Array(Set(self)).sorted() }
}
