import CloudStore
import Foundation
import Logging

/// A store mounted as a file system: the view, the kernel session and the watcher that
/// keeps the kernel's caches right when other processes write.
///
/// ```swift
/// let mount = try StoreMount(store: try Store.open(at: path), at: "Mount")
/// mount.run()   // serves until unmounted
/// ```
public final class StoreMount: Sendable {
    public let view: StoreView
    let session: FuseSession
    let watcher: ChangeWatcher

    public init(store: Store, at mountPoint: String, options: FuseSession.Options = .init(),
                environment: CloudStore.Environment = .development, containers: Set<String>? = nil,
                logger: Logger = Logger(label: "ckfs.mount")) throws(FSError) {
        view = StoreView(store: store, mountPoint: mountPoint, environment: environment, sharedByUsers: options.allowOther,
                         containers: containers, logger: logger)
        session = FuseSession(operations: view, mountPoint: mountPoint, logger: logger)
        view.notifier = session
        watcher = ChangeWatcher(view: view)
        try session.mount(options: options)
    }

    /// Serves requests until the file system is unmounted or the process is asked to stop.
    @discardableResult
    public func run() -> Int32 {
        watcher.start()
        defer { watcher.stop() }
        return session.run()
    }
}
