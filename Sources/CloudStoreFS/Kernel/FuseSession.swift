import CFuse3
import CFuse3Loop
import Dispatch
import Foundation
import Glibc
import Logging
import Synchronization

/// One FUSE mount: libfuse's low-level session, driven by a ``FileSystemOperations``.
///
/// This file and `FuseOperationTable.swift` are the only ones that import CFuse3, and this one
/// alone CFuse3Loop (the request loop, in C): the view never sees a `fuse_req_t`, and this
/// layer never sees a record.
public final class FuseSession: @unchecked Sendable {
    /// The view; set once before the loop starts.
    let operations: any FileSystemOperations
    /// Guards `session`, which the notification queue reads while ``run()`` may end it,
    /// `loop`, which requests read while ``run()`` ends it, and `mayLetKernelOpen`.
    /// Taken before the loop's own lock (docs/Durability.md#the-mount-daemons).
    private let lock = NSLock()
    private var session: OpaquePointer?
    private var loop: OpaquePointer?
    /// Whether the kernel opens files itself: set once, at INIT, and read at every OPEN and
    /// FLUSH, so an atomic rather than `lock`.
    private let kernelOpensFiles = Atomic<Bool>(false)
    /// A read-only mount that only its owner reaches lets the kernel open files without a
    /// request: an open would have nothing to check or to start (no edit can follow, and the
    /// kernel checks the mode bits), and it is the one round trip left when `cat`, `tar` or
    /// `rsync` read a file whose pages the kernel keeps. Freshness then rests on the
    /// ``ChangeWatcher``'s invalidations alone, not on a check at every open.
    private var mayLetKernelOpen = false
    private let notifications = DispatchQueue(label: "ckfs.fuse.notify")
    /// Threads serving requests: at most this many requests that wait (saves, renames,
    /// listings) at once, less one for the receiver; libfuse's own pool went up to 16. An idle
    /// one waits on a condition variable and costs no CPU.
    static let threads: Int32 = 16
    /// How long the receiver keeps reading after a request it answered before it sleeps:
    /// longer than the gap between one file's RELEASE and the next one's OPEN in `cat` or
    /// `tar`, short enough that an idle mount costs nothing. Any length past that gap serves
    /// alike; without a spin the receiver sleeps between files and each OPEN wakes it. It yields the CPU at each turn,
    /// so a client woken on its core runs first.
    static let receiverSpinMicroseconds: Int32 = 50
    public let mountPoint: String

    public struct Options: Sendable {
        public var allowOther = false
        public var readOnly = false
        public init() {}
    }

    let logger: Logger

    public init(operations: any FileSystemOperations, mountPoint: String, logger: Logger = Logger(label: "ckfs.mount")) {
        self.operations = operations
        self.mountPoint = mountPoint
        self.logger = logger
    }

    /// Creates the session and mounts it; the kernel queues requests until ``run()``.
    public func mount(options: Options) throws(FSError) {
        var opts = ["default_permissions", "fsname=" + FuseConnection.sourceName(daemon: ProcessInfo.processInfo.processIdentifier), "subtype=ckfs"]
        if options.allowOther { opts.append("allow_other") }
        if options.readOnly { opts.append("ro") }
        let kernelOpens = options.readOnly && !options.allowOther
        let argv = ["ckfs", "-o", opts.joined(separator: ",")]
        var cStrings = argv.map { strdup($0) }
        defer { cStrings.forEach { free($0) } }
        var ops = FuseOperationTable.make()
        let userdata = Unmanaged.passUnretained(self).toOpaque()
        let se: OpaquePointer? = cStrings.withUnsafeMutableBufferPointer { buf in
            var args = fuse_args(argc: Int32(buf.count), argv: buf.baseAddress, allocated: 0)
            let s = fuse_session_new(&args, &ops, MemoryLayout<fuse_lowlevel_ops>.size, userdata)
            fuse_opt_free_args(&args)
            return s
        }
        guard let se else { throw FSError(EINVAL, "libfuse refused the mount options \(opts)") }
        guard fuse_session_mount(se, mountPoint) == 0 else {
            fuse_session_destroy(se)
            throw FSError(EIO, "cannot mount at \(mountPoint): is it an empty directory you may write, and is /dev/fuse there? (a dead mount there needs `ckfs unmount` first)")
        }
        lock.withLock {
            session = se
            mayLetKernelOpen = kernelOpens
        }
    }

    /// Called at INIT with what the kernel can do: true when it now opens files itself (and
    /// sends no flush), so an open or a flush is answered ENOSYS and reads come with fh 0.
    func startConnection(kernelCanOpen: Bool) {
        let wanted = lock.withLock { mayLetKernelOpen }
        let opens = wanted && kernelCanOpen
        kernelOpensFiles.store(opens, ordering: .releasing)
        if opens {
            logger.info("read-only mount: the kernel opens files itself (no request per open); saves made elsewhere show once the watcher sees them")
        } else if wanted {
            logger.info("read-only mount: this kernel cannot open files without asking (no FUSE_CAP_NO_OPEN_SUPPORT); every open is a request")
        }
    }

    var kernelOpens: Bool { kernelOpensFiles.load(ordering: .acquiring) }

    /// Serves requests until the file system is unmounted or a signal (SIGINT, SIGTERM, SIGHUP)
    /// asks to stop; then unmounts. ``threads`` threads take turns as the receiver, which
    /// serves requests and stays awake for ``receiverSpinMicroseconds`` after each; a request
    /// that comes to wait (``willWait()``) hands the receiving on first
    /// (`Sources/CFuse3Loop/loop.c`).
    public func run() -> Int32 {
        guard let se = lock.withLock({ session }) else { return -1 }
        guard let l = CFuse3_loop_create(se, Self.threads, Self.receiverSpinMicroseconds) else { return -errno }
        lock.withLock { loop = l }
        fuse_set_signal_handlers(se)
        let rc = CFuse3_loop_run(l)
        fuse_remove_signal_handlers(se)
        lock.withLock {
            loop = nil
            session = nil
        }
        CFuse3_loop_destroy(l)
        notifications.sync {}
        fuse_session_unmount(se)
        fuse_session_destroy(se)
        return rc
    }
}

extension FuseSession: KernelNotifier {
    public func willWait() {
        lock.withLock { if let loop { CFuse3_loop_will_block(loop) } }
    }

    public func invalidateAttributesNow(_ inode: UInt64) {
        guard let se = lock.withLock({ session }) else { return }
        // A negative offset: attributes only. The kernel then neither locks nor waits for pages.
        _ = fuse_lowlevel_notify_inval_inode(se, inode, -1, 0)
    }

    public func invalidateNode(_ inode: UInt64) {
        // Where every open is a request, the open decides whether the kernel keeps its pages
        // (the view's ItemCacheTable); dropping them here would wait on the page locks of reads
        // in flight, which a killed daemon never answers.
        let pages: off_t = kernelOpens ? 0 : -1
        notifications.async { [self] in
            guard let se = lock.withLock({ session }) else { return }
            _ = fuse_lowlevel_notify_inval_inode(se, inode, pages, 0)
        }
    }

    public func invalidateEntry(parent: UInt64, name: String) {
        notifications.async { [self] in
            guard let se = lock.withLock({ session }) else { return }
            _ = name.withCString { fuse_lowlevel_notify_inval_entry(se, parent, $0, strlen($0)) }
        }
    }
}
