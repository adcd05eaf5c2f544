import CloudStore
import Foundation

/// The records the view has rendered, by name: the texts of opened files, at most
/// ``textBytesKept`` bytes, and what an open needs of them, for at most ``statsKept`` records.
///
/// What it holds is current without asking the engine: a zone catalog's refresh calls
/// ``forget(_:in:)`` with what it took in before any other refresh of the zone returns, and a
/// record read before a change is not kept after it (``keep(_:as:readAt:)`` compares the
/// zone's generation with the one read before the record).
///
/// `@unchecked Sendable`: `lock` guards every `var`. A leaf: nothing is called while it is held.
final class RenderCache: @unchecked Sendable {
    /// Rendered text kept, in bytes: a folder of some thousands of records read again and
    /// again (`cat`, `grep -r`, `tar`) is rendered once; a zone's worth would make the
    /// daemon's memory grow with the zone.
    static let textBytesKept = 16 << 20
    /// Opened records whose ``RecordStat`` is kept (about 700 bytes each, the map's room to
    /// grow included): opening a folder's files again and again then reads and renders no
    /// record whose version the kernel's pages hold, even when its text is no longer kept.
    static let statsKept = 16_384

    private let lock = NSLock()
    private var texts: [RecordRef: RenderedRecord] = [:]
    private var textBytes = 0
    private var stats: [RecordRef: RecordStat] = [:]
    /// Counts the changes taken in for each zone; never reset, so a number names one state
    /// of the zone's records.
    private var generations: [StoreView.ZoneRef: UInt64] = [:]

    /// The kept text of a record, and the generation of its zone to hand to
    /// ``keep(_:as:readAt:)`` when the record is read now.
    func text(_ ref: RecordRef) -> (RenderedRecord?, generation: UInt64?) {
        lock.withLock { (texts[ref], generations[StoreView.ZoneRef(database: ref.database, zone: ref.zone)]) }
    }

    /// What an open of a record needs kept, in one look: its text when kept, else its stat.
    func forOpen(_ ref: RecordRef) -> (text: RenderedRecord?, stat: RecordStat?) {
        lock.withLock {
            if let text = texts[ref] { return (text, text.stat) }
            return (nil, stats[ref])
        }
    }

    /// What is kept of a record's stat, whatever its type.
    func stat(_ ref: RecordRef) -> RecordStat? {
        lock.withLock { stats[ref] ?? texts[ref]?.stat }
    }

    /// Keeps a record rendered from what was read after ``text(_:)`` gave `generation`,
    /// unless a change was taken in since (the read may be older than it).
    func keep(_ made: RenderedRecord, as ref: RecordRef, readAt generation: UInt64?) {
        lock.withLock {
            guard generations[StoreView.ZoneRef(database: ref.database, zone: ref.zone)] == generation else { return }
            drop(ref)
            if textBytes > Self.textBytesKept {
                texts = [:]
                textBytes = 0
            }
            texts[ref] = made
            textBytes += made.bytes.count
            if stats.count >= Self.statsKept { stats = [:] }
            stats[ref] = made.stat
        }
    }

    /// Moves the zone's generation on and drops what is kept of the records that changed.
    func forget(_ change: ZoneCatalogChange, in zone: StoreView.ZoneRef) {
        lock.withLock {
            generations[zone, default: 0] += 1
            switch change {
            case .none:
                return
            case .records(let names):
                for name in names.keys { drop(RecordRef(database: zone.database, zone: zone.zone, name: name)) }
            case .reloaded, .zoneGone:
                for r in texts.keys where r.database == zone.database && r.zone == zone.zone { drop(r) }
                for r in stats.keys where r.database == zone.database && r.zone == zone.zone { stats[r] = nil }
            }
        }
    }

    /// Lock held.
    private func drop(_ ref: RecordRef) {
        if let old = texts.removeValue(forKey: ref) { textBytes -= old.bytes.count }
        stats[ref] = nil
    }
}
