import Foundation
import Testing
import TestSupport
@testable import CloudStore

/// `Syscall.spawn`, which starts every child process of ckfs and of its tests (Foundation's
/// `Process.run()` copies whole `dirent` names past readdir's buffer, see
/// `DirectoryListingTests`).
@Suite struct SpawnTests {
    func temporary(_ name: String) -> String { NSTemporaryDirectory() + "ckfs-spawn-\(UUID().uuidString)-" + name }

    /// Standard input from a file, output into a pipe of ours, error where output goes; with
    /// `closeOthers` the child holds no other descriptor of this process.
    @Test func streamsGoWhereTheyAreSentAndNothingElseIsInherited() throws {
        let input = temporary("in")
        try Data("from the file\n".utf8).write(to: URL(fileURLWithPath: input))
        defer { unlink(input) }
        var ends: [Int32] = [-1, -1]
        #expect(pipe(&ends) == 0)
        // An open descriptor the child must not see.
        let stray = open("/dev/null", O_RDONLY)
        defer { close(stray) }
        #expect(stray > 2)
        let script = "cat; echo to-error >&2; ls /proc/self/fd"
        let pid = try Syscall.spawn("/bin/sh", arguments: ["sh", "-c", script], environment: [:],
                                    files: .init(input: .file(input), output: .descriptor(ends[1]), error: .output),
                                    closeOthers: true).get()
        close(ends[1])
        let output = FileHandle(fileDescriptor: ends[0], closeOnDealloc: true).readDataToEndOfFile()
        #expect(try Syscall.waitForExit(pid).get() == 0)
        let lines = String(decoding: output, as: UTF8.self).split(separator: "\n").map(String.init)
        #expect(lines.prefix(2) == ["from the file", "to-error"])
        // ls lists 0, 1, 2 and the folder it reads /proc/self/fd through; no pipe end, no stray.
        let descriptors = lines.dropFirst(2).compactMap { Int32($0) }
        #expect(descriptors == [0, 1, 2, 3], "the child holds more than its three streams: \(lines)")
    }

    /// A child's mask of `field` (`SigIgn`, `SigBlk`) as its /proc/self/status shows it.
    func childSignals(_ field: String) throws -> UInt64 {
        let output = temporary("out")
        defer { unlink(output) }
        let pid = try Syscall.spawn("/bin/grep", arguments: ["grep", "^\(field):", "/proc/self/status"], environment: [:],
                                    files: .init(output: output)).get()
        #expect(try Syscall.waitForExit(pid).get() == 0)
        let line = try String(contentsOfFile: output, encoding: .utf8)
        return try #require(UInt64(line.split(separator: "\t").last?.trimmingCharacters(in: .whitespacesAndNewlines) ?? "", radix: 16), "\(line)")
    }

    /// A child starts with SIGPIPE's default action even when this process ignores it, as
    /// programs expect (`yes | head` ends `yes`). (SIGPIPE stays ignored here: `Spawned`
    /// ignores it for the whole test process anyway.)
    @Test func aChildStartsWithSIGPIPEsDefaultAction() throws {
        signal(SIGPIPE, SIG_IGN)
        #expect(try childSignals("SigIgn") & (1 << (UInt64(SIGPIPE) - 1)) == 0, "SIGPIPE is ignored in the child")
    }

    /// A child blocks no signal, whatever the spawning thread blocks: a test or a server
    /// thread of libdispatch blocks nearly all, and a child started from it would not stop on
    /// SIGTERM.
    @Test func aChildBlocksNoSignal() throws {
        var blocked = sigset_t(), previous = sigset_t()
        sigemptyset(&blocked)
        sigaddset(&blocked, SIGTERM)
        sigaddset(&blocked, SIGINT)
        pthread_sigmask(SIG_BLOCK, &blocked, &previous)
        defer { pthread_sigmask(SIG_SETMASK, &previous, nil) }
        #expect(try childSignals("SigBlk") == 0)
    }

    /// Nothing in ckfs or its tests starts a process through Foundation's `Process`.
    @Test func noSourceUsesFoundationsProcess() throws {
        let package = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        var checked = 0
        for folder in ["Sources", "Tests"] {
            let files = FileManager.default.enumerator(atPath: package.path + "/" + folder)?.compactMap { $0 as? String } ?? []
            for file in files where file.hasSuffix(".swift") {
                let text = try String(contentsOfFile: package.path + "/" + folder + "/" + file, encoding: .utf8)
                checked += 1
                let code = text.split(separator: "\n").map { $0.split(separator: "//", maxSplits: 1, omittingEmptySubsequences: false)[0] }
                let uses = code.filter { $0.contains(#/\bProcess\(\)/#) }
                #expect(uses.isEmpty, "\(folder)/\(file) starts a process with Foundation's Process: \(uses)")
            }
        }
        #expect(checked > 100)
    }
}
