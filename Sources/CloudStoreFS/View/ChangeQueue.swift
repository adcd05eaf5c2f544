import CloudStore
import Foundation

/// The engine's feed of commits (`CommitFeed`) that the ``ChangeWatcher`` reads, and what
/// it proves: which zones nobody has
/// written to since the view last looked at them, so a request can skip the `stat` of the
/// zone's log that ``StoreView/catalog(_:_:)`` otherwise makes.
///
/// The feed reports a commit before the save is acknowledged (the file backend's watch of
/// folders queues the event inside the commit's own write). So a zone is quiet when:
/// 1. it was followed before a look at it began, that look has finished (the catalog holds
///    every save committed before it began), and
/// 2. no event for it has been read from the watch since that look began, and
/// 3. the watch holds no event not yet read.
///
/// A look in progress proves nothing yet: the watcher, woken by a save, drains the event and
/// starts its look, and an open that found the zone quiet right then served the catalog
/// before that save (an edit loop read its previous version). So ``looking(at:)`` hands out
/// the zone's event count and ``looked(at:since:)`` makes the zone quiet only if no event for
/// it was read in between.
///
/// The watcher reads the watch only under `lock`, and so does ``isQuiet(_:)`` check it: an
/// event is either still queued or already taken out of `quiet`, never in between. Not
/// followed (no watch on the system, out of watches, the zone's folder gone), a zone is never
/// quiet and every request looks.
final class ChangeQueue: @unchecked Sendable {
    /// What the view follows: a zone, or a key-value store.
    enum Followed: Hashable, Sendable {
        case zone(StoreView.ZoneRef)
        case keyValue(KeyValueRef)
    }

    /// The commits to what the view shows; read only through ``drain(_:)``.
    let commits: any CommitFeed<Followed>
    /// Guards `watching`, `quiet`, `events` and `overflows`, and every read of `commits`.
    private let lock = NSLock()
    private var watching: Set<StoreView.ZoneRef> = []
    private var quiet: Set<StoreView.ZoneRef> = []
    /// Events read for each zone (a lost watch counts as one), and overflows of the queue.
    private var events: [StoreView.ZoneRef: UInt64] = [:]
    private var overflows: UInt64 = 0

    /// `commits`: the store's feed (`StoreBackend.commitFeed(of:)`).
    init(commits: any CommitFeed<Followed>) {
        self.commits = commits
    }

    /// What a look began with: the counts an event read since then would have moved.
    struct Look: Equatable {
        fileprivate let events: UInt64
        fileprivate let overflows: UInt64
    }

    /// True when nothing can have been written to the zone since the view's last look began.
    func isQuiet(_ zone: StoreView.ZoneRef) -> Bool {
        lock.withLock { quiet.contains(zone) && !hasQueuedEvents() }
    }

    /// Called as the view starts a look at the zone (a `stat` of its log, the catalog's
    /// refresh); nil when its folder is not watched, so the look can prove nothing.
    func looking(at zone: StoreView.ZoneRef) -> Look? {
        lock.withLock { watching.contains(zone) ? Look(events: events[zone, default: 0], overflows: overflows) : nil }
    }

    /// Called when that look has finished and the catalog holds what it found: the zone is
    /// quiet if no event for it (and no overflow) was read since the look began. A queued
    /// event not read yet keeps it from being quiet at ``isQuiet(_:)``.
    func looked(at zone: StoreView.ZoneRef, since look: Look?) {
        lock.withLock {
            guard let look, watching.contains(zone),
                  look == Look(events: events[zone, default: 0], overflows: overflows) else { return }
            quiet.insert(zone)
        }
    }

    /// Not quiet until the view's next look: that look failed, or the watcher's once-a-second
    /// sweep wants a look whatever the queue says (a store on a network file system gets no
    /// events for writes made on another machine).
    func forget(_ zone: StoreView.ZoneRef) {
        _ = lock.withLock { quiet.remove(zone) }
    }

    /// The zone is followed from now on.
    func watched(_ zone: StoreView.ZoneRef) {
        _ = lock.withLock { watching.insert(zone) }
    }

    /// What a read of the queue found.
    struct Events {
        /// Zones written to: no longer quiet.
        var touched: [StoreView.ZoneRef] = []
        /// Zones whose watch is gone.
        var unwatched: [StoreView.ZoneRef] = []
        /// The queue overflowed: events were lost, so no zone is quiet.
        var overflowed = false
    }

    /// Reads the queued events with `reading` (which must not block) under the lock, so no
    /// request sees the queue empty before the zones it names stop being quiet.
    func drain(_ reading: () -> Events) {
        lock.withLock {
            let found = reading()
            if found.overflowed {
                quiet.removeAll()
                overflows &+= 1
            }
            for z in found.touched {
                quiet.remove(z)
                events[z, default: 0] &+= 1
            }
            for z in found.unwatched {
                watching.remove(z)
                quiet.remove(z)
                events[z, default: 0] &+= 1
            }
        }
    }

    /// No watcher any more: nothing is quiet.
    func stop() {
        lock.withLock {
            watching.removeAll()
            quiet.removeAll()
        }
    }

    private func hasQueuedEvents() -> Bool {
        commits.hasUnreadEvents
    }
}
