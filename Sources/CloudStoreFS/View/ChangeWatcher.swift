import CloudStore
import Foundation

/// Tells the view at once when another process (the CLI, an API client, another mount)
/// commits to a zone or a key-value store it shows, so the kernel's caches are dropped before
/// anyone looks.
///
/// It watches each shown zone's directory with inotify (every commit appends to the zone's
/// log there) and the folder of each shown key-value store (every write renames a new
/// `keyvalue.plist` into it), and, as a fallback for anything inotify misses, looks at all of
/// them once a second. What it reads from the queue also tells the view which zones are
/// quiet (``ChangeQueue``), so requests for those skip their own look at the zone's log.
final class ChangeWatcher: @unchecked Sendable {
    private enum Watched: Hashable {
        case zone(StoreView.ZoneRef)
        case keyValue(KeyValueRef)
    }

    private let view: StoreView
    /// The view's inotify queue, read only through ``ChangeQueue/drain(_:)``.
    private let queue: ChangeQueue
    /// Guards every `var` below; taken after the queue's lock (docs/Durability.md#the-mount-daemons).
    private let lock = NSLock()
    private var byWatch: [Int32: Watched] = [:]
    private var watched: Set<Watched> = []
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
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while !lock.withLock({ stopped }) {
            addWatches()
            var touched: Set<Watched> = []
            if Syscall.waitForFolderEvents(queue.fd, milliseconds: 100) {
                queue.drain { () -> ChangeQueue.Events in
                    let (found, events) = read(into: &buffer)
                    touched = found
                    return events
                }
            }
            if Date().timeIntervalSince(lastSweep) >= 1 {
                lastSweep = Date()
                let zones = view.openZones
                // A look whatever the queue says: the sweep is for what the queue misses.
                for z in zones { queue.forget(z) }
                touched = Set(zones.map(Watched.zone) + view.openKeyValueRefs.map(Watched.keyValue))
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

    /// Reads what the queue holds (with the queue's lock held): the watched folders written
    /// to, and for the queue the zones touched, the zones whose watch is gone, an overflow.
    /// A folder moved or removed (a zone deleted renames its folder away first) loses its
    /// watch here, so the next round watches whatever folder has its path then.
    private func read(into buffer: inout [UInt8]) -> (Set<Watched>, ChangeQueue.Events) {
        var touched: Set<Watched> = []
        var events = ChangeQueue.Events()
        for event in Syscall.readFolderEvents(queue.fd, into: &buffer) {
            let wd = event.watch
            if event.overflowed {
                events.overflowed = true
                touched.formUnion(lock.withLock { watched })
                continue
            }
            let gone = event.watchGone
            guard let t = lock.withLock({ () -> Watched? in
                guard let t = byWatch[wd] else { return nil }
                if gone {
                    byWatch[wd] = nil
                    watched.remove(t)
                }
                return t
            }) else { continue }
            touched.insert(t)
            if case .zone(let z) = t {
                events.touched.append(z)
                if gone { events.unwatched.append(z) }
            }
        }
        return (touched, events)
    }

    private func addWatches() {
        for t in view.openZones.map(Watched.zone) + view.openKeyValueRefs.map(Watched.keyValue) {
            if lock.withLock({ watched.contains(t) }) { continue }
            let directory: String
            switch t {
            case .zone(let z):
                guard let db = try? view.database(z.database, caller: nil) else { continue }
                directory = db.zoneDirectoryPath(z.zone)
            case .keyValue(let ref):
                guard let file = try? view.keyValueFile(ref) else { continue }
                directory = (file.path as NSString).deletingLastPathComponent
            }
            // Fails while the folder does not exist yet; the next round tries again.
            guard let wd = Syscall.watchFolder(queue.fd, directory) else { continue }
            lock.withLock {
                byWatch[wd] = t
                watched.insert(t)
            }
            if case .zone(let z) = t { queue.watched(z) }
        }
    }
}
