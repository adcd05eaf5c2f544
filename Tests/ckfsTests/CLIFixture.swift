import Foundation
import Testing
import TestSupport
@testable import CloudStore

/// Runs the built `ckfs` binary against a temporary store.
final class CLIFixture: @unchecked Sendable {
    let store: String

    static let binary: String = {
        // The test bundle sits beside the products: .build/<triple>/debug/ckfsPackageTests.xctest
        let exe = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        var dir = URL(fileURLWithPath: exe).deletingLastPathComponent()
        while !FileManager.default.isExecutableFile(atPath: dir.appendingPathComponent("ckfs").path), dir.path != "/" {
            dir = dir.deletingLastPathComponent()
        }
        return dir.appendingPathComponent("ckfs").path
    }()

    init(initArgs: [String] = []) throws {
        store = NSTemporaryDirectory() + "ckfs-cli-" + UUID().uuidString
        let r = run(["init"] + initArgs)
        guard r.status == 0 else { throw CKError(.internalError, "init failed: \(r.stderr)") }
    }

    /// Runs against `store`, a store made before (a restored copy), and removes it at the end.
    init(adopting store: String) {
        self.store = store
    }

    deinit { try? FileManager.default.removeItem(atPath: store) }

    /// The path of the index file of the default zone in `store` (the first found).
    static func indexFile(of store: String) throws -> String {
        let files = FileManager.default.enumerator(atPath: store)?.compactMap { $0 as? String } ?? []
        return try #require(files.first { $0.hasSuffix("zones/_defaultZone/index.sqlite") }.map { store + "/" + $0 })
    }

    struct Output {
        var status: Int32
        var stdout: String
        var stderr: String
        var json: JSONValue? { try? JSONParser.parse(stdout) }
    }

    /// Runs `ckfs ARGS --store STORE --user USER` with `input` on standard input (no
    /// `--user` when `user` is nil: the OS user, or what ARGS say).
    @discardableResult
    func run(_ args: [String], input: String? = nil, user: String? = "alice") -> Output {
        Self.exec(Self.binary, args + ["--store", store] + (user.map { ["--user", $0] } ?? []), input: input)
    }

    /// Runs `path` with `args` and `input` on standard input, and waits for it; its status is
    /// the exit status, or 128 + the signal that ended it. (Through the engine's posix_spawn,
    /// as `Spawned` explains, with standard input, output and error in files.)
    static func exec(_ path: String, _ args: [String], input: String? = nil, environment: [String: String]? = nil) -> Output {
        let base = NSTemporaryDirectory() + "ckfs-exec-" + UUID().uuidString
        let (inFile, outFile, errFile) = (base + ".in", base + ".out", base + ".err")
        defer { for f in [inFile, outFile, errFile] { unlink(f) } }
        guard FileManager.default.createFile(atPath: inFile, contents: Data((input ?? "").utf8)) else {
            return Output(status: -1, stdout: "", stderr: "cannot write \(inFile)")
        }
        let files = Syscall.ChildFiles(input: inFile, output: outFile, error: errFile)
        let spawned = Syscall.spawn(path, arguments: [path] + args, environment: environment ?? ProcessInfo.processInfo.environment,
                                    files: files, closeOthers: true)
        guard case .success(let pid) = spawned, case .success(let status) = Syscall.waitForExit(pid) else {
            return Output(status: -1, stdout: "", stderr: "cannot run \(path): \(spawned)")
        }
        func text(_ file: String) -> String { String(decoding: FileManager.default.contents(atPath: file) ?? Data(), as: UTF8.self) }
        return Output(status: status, stdout: text(outFile), stderr: text(errFile))
    }

    /// Runs `ckfs ARGS --store STORE --user alice`, kills it with SIGKILL after `microseconds`,
    /// and returns the lines it printed by then.
    func runKilled(_ args: [String], after microseconds: UInt32) throws -> [Substring] {
        try runKilled(args, afterFirstLine: false, then: microseconds)
    }

    /// Runs the command and kills it with SIGKILL `microseconds` after it printed its first
    /// line (at once if it exits without one): the kill lands while it works, however long
    /// this machine takes to start a process (50 ms to seconds under load).
    func runKilledAfterFirstLine(_ args: [String], then microseconds: UInt32) throws -> [Substring] {
        try runKilled(args, afterFirstLine: true, then: microseconds)
    }

    /// Runs the command and kills it with SIGKILL `microseconds` after the file at `path`
    /// appears (at once if it ends first): the kill lands while the command works on that
    /// file, however long this machine takes to start a process.
    func runKilled(_ args: [String], afterCreating path: String, then microseconds: UInt32) throws -> [Substring] {
        let child = try spawn(args, untilCreating: path)
        usleep(microseconds)
        child.signal(SIGKILL)
        child.wait()
        return child.outputToEnd.split(separator: "\n")
    }

    /// How long the command takes from the file at `path` appearing to its exit, in µs.
    func microsecondsAfterCreating(_ path: String, by args: [String]) throws -> UInt32 {
        let child = try spawn(args, untilCreating: path)
        let start = DispatchTime.now().uptimeNanoseconds
        child.wait()
        return UInt32(min((DispatchTime.now().uptimeNanoseconds - start) / 1_000, UInt64(UInt32.max)))
    }

    /// Starts the command and returns once the file at `path` exists or the command ended.
    private func spawn(_ args: [String], untilCreating path: String) throws -> Spawned {
        let child = try Spawned(Self.binary, args + ["--store", store, "--user", "alice"])
        while child.isRunning && !FileManager.default.fileExists(atPath: path) { usleep(200) }
        return child
    }

    private func runKilled(_ args: [String], afterFirstLine: Bool, then microseconds: UInt32) throws -> [Substring] {
        let child = try Spawned(Self.binary, args + ["--store", store, "--user", "alice"])
        if afterFirstLine { _ = child.output { $0.contains("\n") } }
        usleep(microseconds)
        child.signal(SIGKILL)
        child.wait()
        return child.outputToEnd.split(separator: "\n")
    }

    /// The store as the library sees it.
    func database(user: String = "alice") throws -> Database {
        try Store.open(at: store).container().database(.private, caller: Caller(userName: user))
    }
}
