import CloudStore
import Foundation

/// Tells the view at once when another process (the CLI, an API client, another mount)
/// commits to a zone or a key-value store it shows, so the kernel's caches are dropped before
/// anyone looks.
///
/// It follows each shown zone and key-value store through the engine's `CommitFeed` (the
/// view's ``ChangeQueue``) and, as a fallback for anything the watch misses, looks at all of
/// them once a second. What it reads from the watch also tells the view which zones are
/// quiet (``ChangeQueue``), so requests for those skip their own look at the zone's log.
final class ChangeWatcher: @unchecked Sendable {
    private typealias Followed = ChangeQueue.Followed

    private let view: StoreView
    private let queue: ChangeQueue
    /// Guards `stopped`; taken alone.
    private let lock = NSLock()
    private var stopped = false

    init(view: StoreView) {
        self.view = view
        self.queue = view.changes
    }

    func start() {
        let thread = Thread { [self] in run() }
        thread.name = "ckfs.watch"
        thread.start()
    }

    func stop() { lock.withLock { stopped = true } }

    private func run() {
        var lastSweep = Date()
        while !lock.withLock({ stopped }) {
            follow()
            var touched: Set<Followed> = []
            if queue.commits.wait(milliseconds: 100) {
                queue.drain { () -> ChangeQueue.Events in
                    let (found, events) = read()
                    touched = found
                    return events
                }
            }
            if Date().timeIntervalSince(lastSweep) >= 1 {
                lastSweep = Date()
                let zones = view.openZones
                // A look whatever the queue says: the sweep is for what the queue misses.
                for z in zones { queue.forget(z) }
                touched = Set(zones.map(Followed.zone) + view.openKeyValueRefs.map(Followed.keyValue))
            }
            for t in touched {
                switch t {
                case .zone(let z): _ = try? view.catalog(z.database, z.zone)
                case .keyValue(let ref): _ = try? view.keyValues(ref)
                }
            }
        }
        queue.stop()
    }

    /// Reads what the watch holds (with the queue's lock held): what was written to, and for
    /// the queue the zones touched, the zones no longer followed, an overflow. A zone whose
    /// folder moved or went (a zone deleted renames its folder away first) is no longer
    /// followed, so the next round follows whatever folder has its path then.
    private func read() -> (Set<Followed>, ChangeQueue.Events) {
        let report = queue.commits.read()
        var touched = Set(report.written)
        var events = ChangeQueue.Events()
        if report.overflowed {
            events.overflowed = true
            touched.formUnion(queue.commits.followedTargets)
        }
        for case .zone(let z) in report.written { events.touched.append(z) }
        for case .zone(let z) in report.unfollowed { events.unwatched.append(z) }
        return (touched, events)
    }

    /// Follows every zone and key-value store the view shows that is not followed yet.
    private func follow() {
        for t in view.openZones.map(Followed.zone) + view.openKeyValueRefs.map(Followed.keyValue) {
            if queue.commits.isFollowing(t) { continue }
            // Fails while the zone or store has no folder yet; the next round tries again.
            switch t {
            case .zone(let z):
                guard let db = try? view.database(z.database, caller: nil), queue.commits.follow(t, zone: db.zoneStorage(z.zone)) else { continue }
                queue.watched(z)
            case .keyValue(let ref):
                guard let file = try? view.keyValueStorage(ref) else { continue }
                queue.commits.follow(t, keyValues: file)
            }
        }
    }
}
