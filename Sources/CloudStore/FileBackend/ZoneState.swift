/// What one opening of a zone knows of the zone in memory: where it follows the log, the
/// records it keeps parsed, the versions the record files do not hold yet, and what it has
/// learnt of the zone's names and `deleteSelf` edges. A log entry changes all of it in one
/// step (``absorb(_:)``), so it is one value, kept by ``ZoneFolder`` in a `Mutex`.
struct ZoneState {
    /// The log followed: its inode, and where the entries taken in so far end (-1: not
    /// followed yet, or the log was replaced; the next look starts over).
    var tailInode: UInt64 = 0
    var tailOffset: Int64 = -1
    /// The log `tailInode` names, held open by every process that follows it (readers too):
    /// while it is open its inode is not given to another file, so a zone deleted and made
    /// again between two looks has a log of another inode, and the next look starts over
    /// instead of taking the new log for the old one grown. -1: none held.
    var tailHold: Int32 = -1
    /// The parsed records kept.
    var cache: RecordCache
    /// The newest version (nil: deleted) of every record touched by an entry the record files
    /// may not hold yet; never evicted, dropped once the apply marker passes its entry.
    var unapplied: [String: Pending] = [:]
    /// The highest `applied` seen in the apply marker.
    var knownApplied: Int64 = -1
    /// Bumped whenever the cache takes in log entries or is reset: a record read from its file
    /// is cached only if no entry arrived meanwhile.
    var generation: UInt64 = 0
    /// The zone's `deleteSelf` edges, once a cascade needed them (``DeleteSelfEdges``).
    var deleteSelfEdges: DeleteSelfEdges?
    /// Every record name in the zone, once a write transaction has listed the records folder
    /// (when the probes for new names have cost about what the listing will); then kept by
    /// ``absorb(_:)``, and dropped with the caches. A save of a new name then needs no failed
    /// `open` of its file, a lookup in a large folder that was a tenth of a save's CPU.
    var knownNames: KnownNames?
    /// File probes that found no record, since the caches were last reset, and how many make
    /// listing the folder worth it.
    var missedProbes = 0
    var probesBeforeListing = Self.minimumProbesBeforeListing
    static let minimumProbesBeforeListing = 64

    /// A record's version that the record files may not hold yet (nil: deleted), and the entry
    /// that made it.
    struct Pending {
        var seq: Int64
        var record: Record?
    }

    init(cache: RecordCache) {
        self.cache = cache
    }

    /// Takes in a log entry: the cache, the `deleteSelf` edges, the known names and the
    /// versions the files lack.
    mutating func absorb(_ entry: LogEntry) {
        generation &+= 1
        for d in entry.deleted {
            cache.remove(d.recordName)
            deleteSelfEdges?.remove(d.recordName)
            if entry.seq > knownApplied { unapplied[d.recordName] = Pending(seq: entry.seq, record: nil) }
        }
        for record in entry.saved {
            cache.insert(record)
            deleteSelfEdges?.insert(record)
            knownNames?.insert(record.recordID.recordName)
            if entry.seq > knownApplied { unapplied[record.recordID.recordName] = Pending(seq: entry.seq, record: record) }
        }
    }

    /// Notes that the files hold every entry up to `applied`.
    mutating func noteApplied(_ applied: Int64) {
        guard applied > knownApplied else { return }
        knownApplied = applied
        if !unapplied.isEmpty { unapplied = unapplied.filter { $0.value.seq > applied } }
    }

    /// Forgets everything learnt of the zone; the next look follows the log from its start.
    /// The log held stays held until that look replaces it.
    mutating func reset() {
        cache.removeAll()
        unapplied = [:]
        deleteSelfEdges = nil
        tailOffset = -1
        knownNames = nil
        missedProbes = 0
        probesBeforeListing = Self.minimumProbesBeforeListing
        generation &+= 1
    }
}
