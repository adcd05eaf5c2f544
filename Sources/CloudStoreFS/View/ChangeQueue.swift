import Foundation

/// The inotify queue the ``ChangeWatcher`` reads, and what it proves: which zones nobody has
/// written to since the view last looked at them, so a request can skip the `stat` of the
/// zone's log that ``StoreView/catalog(_:_:)`` otherwise makes (#7, F5).
///
/// Every commit writes the zone's log (and its lock file) in the zone's folder, and the kernel
/// queues the inotify event for the folder's watch inside that `write`, before the save is
/// acknowledged. So a zone is quiet when:
/// 1. its folder was watched before the view's last look at it began, and
/// 2. no event for it has been read from the queue since that look began, and
/// 3. the queue holds no event not yet read (`FIONREAD` is 0).
///
/// The watcher reads the queue only under `lock`, and so does ``isQuiet(_:)`` check it: an
/// event is either still queued or already taken out of `quiet`, never in between. Without
/// a watch (inotify unavailable, out of watches, the folder gone) a zone is never quiet and
/// every request looks, as before.
final class ChangeQueue: @unchecked Sendable {
    /// The inotify descriptor (non-blocking); -1 when inotify is unavailable.
    let fd: Int32
    /// Guards `watching` and `quiet`, and every read of `fd`'s queue.
    private let lock = NSLock()
    private var watching: Set<StoreView.ZoneRef> = []
    private var quiet: Set<StoreView.ZoneRef> = []

    init() {
        fd = inotify_init1(Int32(IN_CLOEXEC | IN_NONBLOCK))
    }

    deinit { if fd >= 0 { close(fd) } }

    /// True when nothing can have been written to the zone since the view's last look began.
    func isQuiet(_ zone: StoreView.ZoneRef) -> Bool {
        lock.withLock { quiet.contains(zone) && !hasQueuedEvents() }
    }

    /// Called as the view starts a look at the zone (a `stat` of its log): from here on an
    /// event for it, or any queued event, makes it not quiet.
    func looking(at zone: StoreView.ZoneRef) {
        lock.withLock { if watching.contains(zone) { quiet.insert(zone) } }
    }

    /// Not quiet until the view's next look: that look failed, or the watcher's once-a-second
    /// sweep wants a look whatever the queue says (a store on a network file system gets no
    /// events for writes made on another machine).
    func forget(_ zone: StoreView.ZoneRef) {
        _ = lock.withLock { quiet.remove(zone) }
    }

    /// The zone's folder is watched from now on.
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

    /// Reads the queued events with `read` (which must not block) under the lock, so no
    /// request sees the queue empty before the zones it names stop being quiet.
    func drain(_ read: () -> Events) {
        lock.withLock {
            let events = read()
            if events.overflowed { quiet.removeAll() }
            for z in events.touched { quiet.remove(z) }
            for z in events.unwatched {
                watching.remove(z)
                quiet.remove(z)
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
        var pending: Int32 = 0
        // An ioctl that fails proves nothing: count it as an event.
        guard fd >= 0, ioctl(fd, UInt(FIONREAD), &pending) == 0 else { return true }
        return pending > 0
    }
}
