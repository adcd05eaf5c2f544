import CloudStore
import Foundation

/// Tells the view at once when another process (the CLI, an API client, another mount)
/// commits to a zone it shows, so the kernel's caches are dropped before anyone looks (F5).
///
/// It watches each shown zone's directory with inotify (every commit appends to the zone's
/// log there) and, as a fallback for anything inotify misses, looks at every shown zone once
/// a second.
final class ChangeWatcher: @unchecked Sendable {
    private let view: StoreView
    private let fd: Int32
    /// Guards every `var` below.
    private let lock = NSLock()
    private var zonesByWatch: [Int32: StoreView.ZoneRef] = [:]
    private var watched: Set<StoreView.ZoneRef> = []
    private var stopped = false

    init(view: StoreView) {
        self.view = view
        self.fd = inotify_init1(Int32(IN_CLOEXEC | IN_NONBLOCK))
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
            var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ready = poll(&p, 1, 100)
            var touched: Set<StoreView.ZoneRef> = []
            if ready > 0 {
                let n = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
                var offset = 0
                while n > 0 && offset + MemoryLayout<inotify_event>.size <= n {
                    let (wd, mask, len) = buffer.withUnsafeBytes { raw -> (Int32, UInt32, UInt32) in
                        let e = raw.loadUnaligned(fromByteOffset: offset, as: inotify_event.self)
                        return (e.wd, e.mask, e.len)
                    }
                    if mask & UInt32(IN_IGNORED) != 0 {
                        lock.withLock {
                            if let z = zonesByWatch.removeValue(forKey: wd) { watched.remove(z) }
                        }
                    } else if let z = lock.withLock({ zonesByWatch[wd] }) {
                        touched.insert(z)
                    }
                    offset += MemoryLayout<inotify_event>.size + Int(len)
                }
            }
            if Date().timeIntervalSince(lastSweep) >= 1 {
                lastSweep = Date()
                touched = Set(view.openZones)
            }
            for z in touched { _ = try? view.catalog(z.database, z.zone) }
        }
        close(fd)
    }

    private func addWatches() {
        for z in view.openZones {
            if lock.withLock({ watched.contains(z) }) { continue }
            guard let db = try? view.database(z.database, caller: nil) else { continue }
            let wd = inotify_add_watch(fd, db.zoneDirectoryPath(z.zone), UInt32(IN_MODIFY | IN_MOVED_TO | IN_CREATE | IN_DELETE_SELF | IN_MOVE_SELF))
            guard wd >= 0 else { continue }
            lock.withLock {
                zonesByWatch[wd] = z
                watched.insert(z)
            }
        }
    }
}
