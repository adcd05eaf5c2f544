import ArgumentParser
import CloudStore
import CloudStoreFS
import Foundation
import Logging

struct Mount: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show the store as files: records as JSON you can read and edit with ls, cat, vim, sed, cp and tar.",
        discussion: "Runs in the background once the mount is ready (the log goes to <store>/mount.log), or in front with --foreground."
    )

    @OptionGroup var options: GlobalOptions

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
            let store = try options.openStore()
            try checkMountPoint(path)
            if foreground || ProcessInfo.processInfo.environment["CKFS_MOUNT_CHILD"] != nil {
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

    private func checkMountPoint(_ path: String) throws {
        var st = stat()
        if stat(path, &st) != 0 {
            let e = errno
            if e == ENOTCONN {
                throw CKError(.invalidArguments, "\(path) is a mount whose daemon died; run `ckfs unmount \(mountPoint)` first")
            }
            throw CKError(.invalidArguments, "mount point \(path): \(String(cString: strerror(e))); create an empty directory there")
        }
        guard st.st_mode & S_IFMT == S_IFDIR else { throw CKError(.invalidArguments, "mount point \(path) is not a directory") }
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
        if foreground { printReady(path, pid: getpid()) }
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
            var status: Int32 = 0
            if waitpid(pid, &status, WNOHANG) == pid {
                let tail = (try? String(contentsOfFile: logPath, encoding: .utf8))?.split(separator: "\n").suffix(3).joined(separator: "\n") ?? ""
                throw CKError(.internalError, "the mount daemon stopped before the mount was ready:\n\(tail)")
            }
            usleep(20_000)
        }
        throw CKError(.internalError, "the mount was not ready after 15 s; see \(logPath)")
    }

    private func printReady(_ path: String, pid: pid_t) {
        print("""
        mounted at \(path) (daemon pid \(pid))
          browse:  ls \(mountPoint)   (records are <container>/<public|private>/<zone>/<RecordType>/<name>.json)
          edit:    vim, sed -i, cp and shell redirects save when the file is closed; refused text lands in \(mountPoint)/lost+found
          stop:    ckfs unmount \(mountPoint)
        """)
        fflush(nil) // flush every stream: stdout may be a pipe to `ckfs mount`
    }
}

struct Unmount: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Unmount a ckfs mount, also one whose daemon died.")

    @Argument(help: "The mount point.")
    var mountPoint: String = "Mount"

    func run() throws {
        let path = absolute(mountPoint)
        // A daemon that died with clients waiting on it may have left its connection open:
        // end it first (asking the file system anything here could wait for ever).
        var aborted = false
        if let connection = FuseConnection.at(path), !connection.daemonIsAlive { aborted = connection.abort() }
        var st = stat()
        let dead = aborted || (stat(path, &st) != 0 && errno == ENOTCONN)
        guard dead || MountTable.isMounted(path) else {
            throw ValidationError("\(path) is not mounted")
        }
        for args in [["-u", path], ["-uz", path]] {
            let p = Process()
            p.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            p.arguments = ["fusermount3"] + args
            try p.run()
            p.waitUntilExit()
            if p.terminationStatus == 0 && !MountTable.isMounted(path) {
                print(dead ? "unmounted \(path) (its daemon had died; saved records are safe in the store)" : "unmounted \(path)")
                return
            }
        }
        throw ExitCode(1)
    }
}

func absolute(_ path: String) -> String {
    let full = path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
    return URL(fileURLWithPath: full).standardizedFileURL.path
}

/// Reads /proc/self/mountinfo.
enum MountTable {
    static func isMounted(_ path: String) -> Bool {
        guard let text = try? String(contentsOfFile: "/proc/self/mountinfo", encoding: .utf8) else { return false }
        let escaped = path.replacingOccurrences(of: " ", with: "\\040")
        return text.split(separator: "\n").contains { line in
            let f = line.split(separator: " ")
            return f.count > 4 && f[4] == escaped && line.contains("fuse")
        }
    }
}

/// Starts a process in its own session (so closing the terminal does not stop it), with
/// output to a log file.
enum Spawn {
    static func detached(_ exe: String, _ args: [String], logPath: String, environment: [String: String]) throws -> pid_t {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, logPath, O_WRONLY | O_CREAT | O_APPEND, 0o600)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        // Nothing else of ours goes to the daemon: a pipe or socket it kept open would keep
        // whoever started `ckfs mount` waiting for an end that never comes.
        for fd in (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd"))?.compactMap({ Int32($0) }) ?? [] where fd > 2 {
            posix_spawn_file_actions_addclose(&actions, fd)
        }
        var attr = posix_spawnattr_t()
        posix_spawnattr_init(&attr)
        defer { posix_spawnattr_destroy(&attr) }
        posix_spawnattr_setflags(&attr, 0x80) // POSIX_SPAWN_SETSID (glibc; not exported to Swift)
        var env = ProcessInfo.processInfo.environment
        for (k, v) in environment { env[k] = v }
        let cArgs = args.map { strdup($0) } + [nil]
        let cEnv = env.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { (cArgs + cEnv).forEach { free($0) } }
        var pid: pid_t = 0
        let rc = posix_spawn(&pid, exe, &actions, &attr, cArgs, cEnv)
        guard rc == 0 else { throw CKError(.internalError, "cannot start the mount daemon: \(String(cString: strerror(rc)))") }
        return pid
    }
}
