import Foundation
import Testing
import TestSupport
@testable import CloudStore

/// A store mounted with `ckfs mount` in a directory outside /tmp (vim skips backups under
/// /tmp, so its save would not take the path real users see), unmounted at the end.
final class MountFixture: @unchecked Sendable {
    let root: String
    let store: String
    let mount: String
    /// The daemon's pid, from `ckfs mount`'s output.
    private(set) var pid: pid_t = 0
    static let user = Caller.currentOSUserName
    static let container = "iCloud.local.ckfs"

    /// `<mount>/<container>/public/_defaultZone` and the private `Notes` zone of the demo.
    var publicZone: String { mount + "/\(Self.container)/public/_defaultZone" }
    var privateNotes: String { mount + "/\(Self.container)/private/Notes" }

    /// Under the package's .build, unless that is itself under a temp directory (a CI clone
    /// in /tmp): then /var/tmp, which vim's default `backupskip` does not name.
    static let base: String = {
        let cwd = FileManager.default.currentDirectoryPath
        let temps = ["/tmp/", ProcessInfo.processInfo.environment["TMPDIR"].map { $0.hasSuffix("/") ? $0 : $0 + "/" }].compactMap { $0 }
        if temps.contains(where: { (cwd + "/").hasPrefix($0) }) { return "/var/tmp/ckfs-mount-tests" }
        return cwd + "/.build/ckfs-mount-tests"
    }()

    /// Extra arguments of `ckfs mount` (for example `--allow-other`).
    private let mountArgs: [String]

    init(demo: Bool = true, base: String = MountFixture.base, mountArgs: [String] = [], beforeMount: (String) throws -> Void = { _ in }) throws {
        self.mountArgs = mountArgs
        root = base + "/" + UUID().uuidString
        store = root + "/store"
        mount = root + "/M"
        try FileManager.default.createDirectory(atPath: mount, withIntermediateDirectories: true)
        if !demo {
            let r = cli(["init"])
            guard r.status == 0 else { throw CKError(.internalError, "init failed: \(r.stderr)") }
        }
        try beforeMount(store)
        try start(demo: demo)
    }

    deinit {
        _ = CLIFixture.exec(CLIFixture.binary, ["unmount", mount])
        try? FileManager.default.removeItem(atPath: root)
    }

    func start(demo: Bool = false) throws {
        let r = cli(["mount", mount] + (demo ? ["--demo"] : []) + mountArgs)
        guard r.status == 0, let range = r.stdout.range(of: #"daemon pid (\d+)"#, options: .regularExpression) else {
            throw CKError(.internalError, "mount failed (\(r.status)): \(r.stderr) \(r.stdout)")
        }
        pid = pid_t(r.stdout[range].split(separator: " ").last!)!
    }

    /// Runs `ckfs ARGS --store STORE --user <OS user>`.
    @discardableResult
    func cli(_ args: [String], input: String? = nil) -> CLIFixture.Output {
        if args.first == "unmount" { return CLIFixture.exec(CLIFixture.binary, args) }
        return CLIFixture.exec(CLIFixture.binary, args + ["--store", store, "--user", Self.user], input: input)
    }

    /// Runs a shell script in the mount fixture's root directory.
    @discardableResult
    func sh(_ script: String) -> CLIFixture.Output {
        CLIFixture.exec("/bin/sh", ["-c", "cd '\(root)' && " + script],
                        environment: ProcessInfo.processInfo.environment.merging(["CKFS_STORE": store, "LC_ALL": "C"]) { $1 })
    }

    func read(_ path: String) -> String? { try? String(contentsOfFile: path, encoding: .utf8) }

    /// A database of the store, read through the library (not the mount).
    func database(_ scope: DatabaseScope) throws -> Database {
        try Store.open(at: store).container().database(scope, caller: Caller(userName: Self.user))
    }

    var mountLog: String { read(store + "/mount.log") ?? "" }

    /// The write system calls the daemon has made (`syscw` in /proc/PID/io): each answer to a
    /// kernel request, and each invalidation it sends, is one `writev` on /dev/fuse, and a
    /// mount that only serves reads writes nothing else. (Not `strace -p`: a tracer started
    /// from a test thread inherits its blocked signals and then cannot be told to detach.)
    func daemonWriteCalls() throws -> Int {
        let io = try String(contentsOfFile: "/proc/\(pid)/io", encoding: .utf8)
        let line = try #require(io.split(separator: "\n").first { $0.hasPrefix("syscw:") })
        return try #require(Int(line.dropFirst("syscw:".count).trimmingCharacters(in: .whitespaces)))
    }

    /// The daemon's write calls while `script` runs (see ``daemonWriteCalls()``).
    func daemonWriteCalls(during script: String) throws -> Int {
        let before = try daemonWriteCalls()
        let r = sh(script)
        #expect(r.status == 0, "\(r.stderr)")
        return try daemonWriteCalls() - before
    }
}
