import Foundation

/// The zones of a container's private databases that may hold shares, in one environment:
/// `<container>/<environment>/shared-zones.json`. Finding a share (by its URL, or a user's
/// shared zones) then reads those zones only, not every zone of every user.
///
/// It names every zone that holds a share, and perhaps some that no longer do: a save that
/// makes a share puts its zone in first, under the file's lock, before it commits; nothing
/// takes a zone out (a stale name costs one look at a zone without shares, while taking one
/// out safely would need that zone's lock against a share being made there). Missing or not
/// readable, the file is made again from every zone, under its lock, by whoever needs it
/// first. `ckfs fsck` adds any zone holding a share that the file lacks (a store restored
/// from a copy whose file is older than its zones).
struct ShareRegistry {
    /// A zone, by its owner's user record name and its name.
    struct Entry: Hashable, Comparable, Sendable {
        var owner: String
        var zone: String

        static func < (a: Entry, b: Entry) -> Bool { (a.owner, a.zone) < (b.owner, b.zone) }
    }

    let container: Container
    let environment: Environment

    private var directory: String { container.store.layout.containerDirectory(container.identifier) + "/" + environment.rawValue }
    var path: String { directory + "/shared-zones.json" }
    private var lockPath: String { directory + "/shared-zones.lock" }

    /// The zones that may hold shares.
    func entries() throws(CKError) -> [Entry] {
        if let known = try read() { return known }
        return try locked { () throws(CKError) -> [Entry] in
            if let known = try read() { return known }
            let found = try scan()
            try write(found)
            return found
        }
    }

    /// Puts `zone` of `owner` in, before a save that may make a share there commits.
    func include(owner: String, zone: String) throws(CKError) {
        let entry = Entry(owner: owner, zone: zone)
        if try read()?.contains(entry) == true { return }
        try locked { () throws(CKError) in
            let known = try read()
            if known?.contains(entry) == true { return }
            let base: [Entry]
            if let known { base = known } else { base = try scan() }
            try write((base + [entry]).uniqued())
        }
    }

    /// Adds every zone holding a share that the file lacks, and returns them (`ckfs fsck`). An
    /// environment with no folder, or no file and no share, is left as it is.
    func repair() throws(CKError) -> [Entry] {
        guard case .success(_?) = Syscall.stat(directory) else { return [] }
        return try locked { () throws(CKError) -> [Entry] in
            let known = try read()
            let missing = try scan().filter { known?.contains($0) != true }
            if !missing.isEmpty { try write(((known ?? []) + missing).uniqued()) }
            return missing
        }
    }

    /// The file's zones; nil when it is missing or is not this file (damaged). A failure to
    /// read it throws: it must not be made again from the zones while a save that has put its
    /// zone in has not committed its share yet.
    private func read() throws(CKError) -> [Entry]? {
        guard let bytes = try Syscall.readFile(path).orThrow(.internalError, "cannot read \(path)"),
              let json = try? JSONParser.parse(bytes), let zones = json["zones"]?.arrayValue else { return nil }
        var out: [Entry] = []
        for z in zones {
            guard let owner = z["owner"]?.stringValue, let zone = z["zone"]?.stringValue else { return nil }
            out.append(Entry(owner: owner, zone: zone))
        }
        return out
    }

    private func write(_ entries: [Entry]) throws(CKError) {
        try container.store.ensureDirectory(directory)
        let zones = entries.sorted().map { JSONValue.object(["owner": .string($0.owner), "zone": .string($0.zone)]) }
        try container.store.writer.replace(path, with: JSONWriter.pretty(.object(["zones": .array(zones)])), durable: true)
    }

    private func locked<T>(_ body: () throws(CKError) -> T) throws(CKError) -> T {
        try container.store.ensureDirectory(directory)
        return try withFileLock(lockPath, body)
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
