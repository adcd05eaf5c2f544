import ArgumentParser
import CloudStore
import CloudStoreFS
import DaemonCommandLine
import Foundation
import Logging

struct MountCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "mount",
        abstract: "Show the store as files: records as JSON you can read and edit with ls, cat, vim, sed, cp and tar.",
        discussion: "Runs in the background once the mount is ready (the log goes to <store>/mount.log), or in front with --foreground."
    )

    @OptionGroup var options: DatabaseOptions

    @Argument(help: "An empty directory to mount on.")
    var mountPoint: String = "Mount"

    @Flag(help: "Stay in front; stop with Ctrl-C or `ckfs unmount`.")
    var foreground = false

    @Flag(help: "Let other users reach the mount (each sees only their own private data); needs user_allow_other in /etc/fuse.conf unless root.")
    var allowOther = false

    @Flag(help: "Mount read-only: the kernel then opens files without asking the daemon, so cat and tar of a warm tree read at about the native speed; saves made elsewhere show a moment later, not at the next open.")
    var readOnly = false

    @Flag(help: "Create the store if needed and fill it with a small demo container first.")
    var demo = false

    @Option(name: .customShort("o"), help: ArgumentHelp("Mount options, comma-separated, as mount(8) and fstab give them: \(MountOptions.help).", valueName: "options"))
    var mountOptions: [String] = []

    @Option(help: "How much the daemon logs: trace, debug, info, notice, warning, error or critical (env CKFS_LOG_LEVEL).")
    var logLevel: Logger.Level?

    /// The flags and `-o` options together.
    var settings: MountOptions {
        get throws {
            var s = try MountOptions(mountOptions)
            s.allowOther = s.allowOther || allowOther
            s.readOnly = s.readOnly || readOnly
            if let c = options.container { s.containers.append(c) }
            return s
        }
    }

    func validate() throws {
        _ = try settings
    }

    func run() throws {
        let path = absolute(mountPoint)
        try reportingErrors {
            if demo { try fillDemo() }
            // Zones are read from their index files, so the daemon's memory does not grow with them.
            let store = try options.openStore()
            try checkContainers(in: store)
            try checkMountPoint(path)
            if foreground || Syscall.environmentValue("CKFS_MOUNT_CHILD") != nil {
                try serve(store, at: path)
            } else {
                try startInBackground(store, at: path)
            }
        }
    }

    private func fillDemo() throws {
        let store = try Store.create(at: options.storePath)
        try DemoData.fill(store, caller: options.place.caller)
    }

    /// A container named with `-o container=` or `--container` that the store lacks would
    /// make an empty mount: refuse it, naming those there are.
    private func checkContainers(in store: Store) throws {
        let known = try store.containerIdentifiers()
        for id in try settings.containers where !known.contains(id) {
            throw CKError(.badContainer, "no container \(id) in the store at \(store.layout.root); it has \(known.joined(separator: ", "))")
        }
    }

    private func checkMountPoint(_ path: String) throws {
        // A plain stat (times asked for): statx of the type alone may be answered from the
        // kernel's cached attributes of a mount whose daemon died.
        let found = Syscall.stat(path, times: true)
        if case .failure(let e) = found, e.errno == Posix.ENOTCONN {
            throw CKError(.invalidArguments, "\(path) is a mount whose daemon died; run `ckfs unmount \(mountPoint)` first")
        }
        guard case .success(let status?) = found else {
            let error: Int32 = if case .failure(let e) = found { e.errno } else { Posix.ENOENT }
            throw CKError(.invalidArguments, "mount point \(path): \(Syscall.errorText(error)); create an empty directory there")
        }
        guard status.isDirectory else { throw CKError(.invalidArguments, "mount point \(path) is not a directory") }
        if MountTable.isMounted(path) { throw CKError(.invalidArguments, "\(path) is already mounted; `ckfs unmount \(mountPoint)` first") }
    }

    private func serve(_ store: Store, at path: String) throws {
        // glibc gives each thread that allocates (the FUSE loop's workers) a malloc arena of
        // its own, each keeping what was freed in it: with its default of 8 per core the
        // daemon's peak after `ls -l` and `cat` of a large zone was a third higher than with
        // two. One per core still lets the workers allocate side by side.
        ProcessTuning.limitMallocArenas(to: max(2, ProcessInfo.processInfo.activeProcessorCount))
        let settings = try settings
        var opts = FuseSession.Options()
        opts.allowOther = settings.allowOther
        opts.readOnly = settings.readOnly
        let logger = DaemonLog.logger(level: logLevel)
        let mount: StoreMount
        do {
            mount = try StoreMount(store: store, at: path, options: opts, environment: settings.environment ?? options.environment,
                                   containers: settings.containers.isEmpty ? nil : Set(settings.containers), logger: logger)
        } catch {
            throw CKError(.internalError, error.reason)
        }
        if foreground { printReady(path, pid: ProcessInfo.processInfo.processIdentifier) }
        logger.info("mounted \(store.layout.root) at \(path)\(settings.readOnly ? " read-only" : "")\(settings.allowOther ? " for every user" : "")")
        startWatchdog(at: path, logPath: store.layout.root + "/mount.log")
        let rc = mount.run()
        logger.info("unmounted \(path) (\(rc))")
    }

    /// A process of its own that ends the mount's connection if this daemon dies with a
    /// client waiting on it (``MountWatchdog``); it holds nothing of the daemon's.
    private func startWatchdog(at path: String, logPath: String) {
        let exe = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().path
        do {
            _ = try Spawn.detached(exe, ["ckfs", "mount-watchdog", path], logPath: logPath, environment: [:])
        } catch {
            writeToStandardError("ckfs: no watchdog for \(path): \(error)\n")
        }
    }

    private func startInBackground(_ store: Store, at path: String) throws {
        let logPath = store.layout.root + "/mount.log"
        // The same command again, in front, in its own session; the demo is filled already.
        let args = CommandLine.arguments.filter { $0 != "--demo" }
        let exe = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().path
        let pid = try Spawn.detached(exe, args, logPath: logPath, environment: ["CKFS_MOUNT_CHILD": "1"])
        let deadline = Date().addingTimeInterval(15)
        while Date() < deadline {
            if MountTable.isMounted(path) {
                printReady(path, pid: pid)
                return
            }
            if Syscall.hasExited(pid) {
                let tail = (try? String(contentsOfFile: logPath, encoding: .utf8))?.split(separator: "\n").suffix(3).joined(separator: "\n") ?? ""
                throw CKError(.internalError, "the mount daemon stopped before the mount was ready:\n\(tail)")
            }
            Thread.sleep(forTimeInterval: 0.02)
        }
        throw CKError(.internalError, "the mount was not ready after 15 s; see \(logPath)")
    }

    private func printReady(_ path: String, pid: Posix.pid_t) {
        print("""
        mounted at \(path) (daemon pid \(pid))
          browse:  ls \(mountPoint)   (records are <container>/<public|private>/<zone>/<RecordType>/<name>.json)
          edit:    vim, sed -i, cp and shell redirects save when the file is closed; refused text lands in \(mountPoint)/lost+found
          stop:    ckfs unmount \(mountPoint)
        """)
        Syscall.flushOutputStreams() // stdout may be a pipe to `ckfs mount`
    }
}
