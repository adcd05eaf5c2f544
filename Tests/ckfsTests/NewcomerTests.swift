import Foundation
import Testing
import TestSupport
@testable import CloudStore

/// A newcomer's first hour, on this machine for real: README's first command with libfuse's
/// packages removed first, then `scripts/install`, `man ckfs`, bash completion,
/// `mount -t fuse.ckfs`, an fstab line through mount(8), and the example systemd unit's
/// commands.
///
/// README's first command runs in this checkout, not in a clone of it: in CI the checkout is a
/// fresh clone whose build `.ci/run` has just made from nothing on this bare machine, and a
/// second build from nothing, in a clone, would prove nothing that one does not and take as
/// long again. `swift test` holds the build folder's lock while its tests run, and the command
/// builds in that folder, so `.ci/run` starts this suite from the test binary itself.
///
/// It removes and installs Debian packages and writes /sbin/mount.fuse.ckfs, so it runs only
/// as root with CKFS_SYSTEM_TESTS=1, and alone: while fuse3 is gone every other mount and
/// unmount fails. `.ci/run` runs it after all the others (CI runs as root on a machine of its
/// own).
@Suite(.serialized) struct NewcomerTests {
    static let enabled = geteuid() == 0 && ProcessInfo.processInfo.environment["CKFS_SYSTEM_TESTS"] == "1"
    static let packageRoot = MountHelperTests.packageRoot

    /// Runs a bash script with `environment` added; returns its output.
    @discardableResult
    static func bash(_ script: String, in dir: String, environment: [String: String] = [:]) -> CLIFixture.Output {
        let env = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        return CLIFixture.exec("/bin/bash", ["-c", "set -euo pipefail; cd '\(dir)'; " + script], environment: env)
    }

    static func isMounted(_ path: String) -> String? {
        let mounts = (try? String(contentsOfFile: "/proc/self/mounts", encoding: .utf8)) ?? ""
        for line in mounts.split(separator: "\n") {
            let fields = line.split(separator: " ").map(String.init)
            if fields.count > 3 && fields[1] == path { return fields[2] + " " + fields[3] }
        }
        return nil
    }

    /// How an ELF executable is linked: whether it names a program interpreter (the dynamic
    /// loader, `PT_INTERP`) and whether it is position-independent (`ET_DYN`).
    static func linking(of path: String) throws -> (interpreter: Bool, positionIndependent: Bool) {
        let file = try #require(FileHandle(forReadingAtPath: path), "cannot open \(path)")
        defer { try? file.close() }
        let bytes = [UInt8](try file.read(upToCount: 1 << 16) ?? Data())
        func integer(_ at: Int, _ size: Int) -> Int {
            (0..<size).reduce(0) { $0 | Int(bytes[at + $1]) << (8 * $1) }
        }
        try #require(bytes.count > 64 && bytes[0...3] == [0x7f, 0x45, 0x4c, 0x46], "\(path) is not an ELF file")
        let headers = integer(32, 8), size = integer(54, 2), count = integer(56, 2)
        try #require(headers + size * count <= bytes.count, "\(path): program headers past the first 64 KiB")
        let interpreter = (0..<count).contains { integer(headers + $0 * size, 4) == 3 }
        return (interpreter, integer(16, 2) == 3)
    }

    /// README's first command: the first line of its first `sh` block, without its comment.
    static func readmeFirstCommand() throws -> String {
        let readme = try String(contentsOfFile: packageRoot + "/README.md", encoding: .utf8)
        let block = try #require(readme.components(separatedBy: "```sh\n").dropFirst().first)
        let line = try #require(block.split(separator: "\n").first)
        return String(line.split(separator: "#").first ?? line).trimmingCharacters(in: .whitespaces)
    }

    @Test(.enabled(if: enabled, "changes the system's packages and /sbin: runs as root with CKFS_SYSTEM_TESTS=1 (.ci/run sets it)"),
          .timeLimit(.minutes(20)))
    func fromABareMachineToAnInstalledTool() throws {
        let work = MountFixture.base + "/newcomer-" + UUID().uuidString.prefix(8)
        let checkout = Self.packageRoot, home = work + "/home", prefix = work + "/prefix"
        let demoMount = checkout + "/Mount"
        // Under `swift test`, README's `swift build` would wait for ever for the lock it holds.
        let parent = (try? String(contentsOfFile: "/proc/\(getppid())/comm", encoding: .utf8)) ?? ""
        try #require(!parent.hasPrefix("swift-test"), """
            started by swift test, whose lock on .build README's swift build would wait for: run the test binary, as .ci/run does \
            (CKFS_SYSTEM_TESTS=1 "$(swift build --show-bin-path)/ckfsPackageTests.xctest" --testing-library swift-testing --filter NewcomerTests)
            """)
        try #require(Self.isMounted(demoMount) == nil, "\(demoMount) is mounted: unmount it (`.build/debug/ckfs unmount`) and run this again")
        let demoMountWasThere = FileManager.default.fileExists(atPath: demoMount)
        try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
        let helperPath = "/sbin/mount.fuse.ckfs"
        let earlierHelper = FileManager.default.contents(atPath: helperPath)
        defer {
            for m in ["M", "fstab-M", "unit-M"] { _ = CLIFixture.exec(CLIFixture.binary, ["unmount", work + "/" + m]) }
            _ = CLIFixture.exec(CLIFixture.binary, ["unmount", demoMount])
            if !demoMountWasThere { try? FileManager.default.removeItem(atPath: demoMount) }
            // Whatever happened, the machine keeps what the other tests need.
            Self.bash("scripts/bootstrap --test", in: checkout)
            if let earlierHelper { _ = FileManager.default.createFile(atPath: helperPath, contents: earlierHelper, attributes: [.posixPermissions: 0o755]) } else { try? FileManager.default.removeItem(atPath: helperPath) }
            try? FileManager.default.removeItem(atPath: work)
        }

        // 1. A bare machine: no libfuse3 development files, no fusermount3.
        let removed = Self.bash("DEBIAN_FRONTEND=noninteractive apt-get remove -y -qq fuse3 libfuse3-dev >/dev/null; ! command -v fusermount3 && ! test -e /usr/include/fuse3/fuse_lowlevel.h", in: "/")
        try #require(removed.status == 0, "\(removed.stdout) \(removed.stderr)")

        // 2. README's first command, as a newcomer types it, in the checkout; HOME is new so the
        // demo store is new too.
        let first = try Self.readmeFirstCommand()
        #expect(first.hasPrefix("scripts/bootstrap && "), "README's first command does not start with the set-up: \(first)")
        let ran = Self.bash("unset XDG_DATA_HOME CKFS_STORE; " + first, in: checkout, environment: ["HOME": home])
        try #require(ran.status == 0, "README's first command failed: \(ran.stderr.suffix(3000))")
        #expect(Self.isMounted(demoMount)?.hasPrefix("fuse.ckfs ") == true, "the demo is not mounted at Mount/")
        #expect(ran.stdout.contains("iCloud.local.ckfs"), "ls -R Mount did not show the demo container: \(ran.stdout.prefix(2000))")
        #expect(ran.stdout.contains(".json"), "ls -R Mount showed no record files")
        #expect(FileManager.default.fileExists(atPath: home + "/.local/share/ckfs/ckfs-store.json"), "the demo store is not in ~/.local/share/ckfs")
        #expect(Self.bash(".build/debug/ckfs unmount", in: checkout).status == 0)

        // 3. The install step (a debug build here: the release build is the same code, linked
        // the same way, and takes minutes more), into a prefix of the test's own; mount(8)'s
        // helper into /sbin. After README's build it compiles only ckfs's and ckfs-server's
        // modules again (Package.swift, CKFS_STATIC_EXECUTABLES).
        let installed = Self.bash("scripts/install", in: checkout, environment: ["PREFIX": prefix, "CONFIGURATION": "debug"])
        try #require(installed.status == 0, "\(installed.stderr.suffix(3000))")
        // Every other module is as README's build left it; the manual plugin builds its own tool.
        // Hummingbird's modules may compile again: SwiftPM 6.3 passes its package traits' defines
        // in an order that changes from one run to the next (swiftlang/swift-package-manager#10525).
        let compiled = Set((installed.stdout + installed.stderr).split(separator: "\n").compactMap { line -> Substring? in
            let words = line.split(separator: " ")
            return words.firstIndex(of: "Compiling").flatMap { words.indices.contains($0 + 1) ? words[$0 + 1] : nil }
        })
        #expect(compiled.contains("ckfs") && compiled.contains("ckfs_server"), "\(compiled.sorted())")
        let expected: Set<Substring> = ["ckfs", "ckfs_server", "plugin", "generate_manual", "ArgumentParser", "ArgumentParserToolInfo"]
        #expect(compiled.filter { !expected.contains($0) && !$0.hasPrefix("Hummingbird") }.isEmpty,
                "the install compiled modules README's build had compiled: \(compiled.sorted())")
        let ckfs = prefix + "/bin/ckfs"
        #expect(CLIFixture.exec(ckfs, ["--version"]).stdout.hasPrefix("ckfs "))
        // Linked as a static executable at a fixed address: no dynamic loader at its start, and
        // no relocating of itself (docs/Performance.md, row 10e). Everything below runs this binary.
        let linked = try Self.linking(of: ckfs)
        #expect(!linked.interpreter && !linked.positionIndependent, "ckfs is not a static executable at a fixed address: \(linked)")
        let shell = try Self.linking(of: "/bin/sh")
        #expect(shell.interpreter && shell.positionIndependent, "the ELF reading does not find a Debian program's interpreter and position independence: \(shell)")
        // The web server, which `ckfs serve` runs in its place, is in libexec, linked the same way.
        let server = try Self.linking(of: prefix + "/libexec/ckfs/ckfs-server")
        #expect(!server.interpreter && !server.positionIndependent, "ckfs-server is not a static executable at a fixed address: \(server)")
        #expect(try String(contentsOfFile: helperPath, encoding: .utf8).contains("ckfs=\(ckfs)\n"))

        // man ckfs, and a subcommand's page.
        let man = Self.bash("man -P cat ckfs && man -P cat ckfs.mount", in: work, environment: ["MANPATH": prefix + "/share/man", "MANWIDTH": "100"])
        #expect(man.status == 0, "\(man.stderr)")
        #expect(man.stdout.contains("ckfs — A local CloudKit store kept as plain JSON files"), "\(man.stdout.prefix(500))")
        let manText = man.stdout.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        #expect(manText.contains("allow_other, ro, container=ID"), "ckfs.mount(1) does not list the mount options")

        // bash completion, as bash-completion loads it: subcommands, then a subcommand's flags.
        let completion = prefix + "/share/bash-completion/completions/ckfs"
        let completed = Self.bash("""
            PATH='\(prefix)/bin':$PATH; source '\(completion)'
            COMP_WORDS=(ckfs mo); COMP_CWORD=1; COMP_LINE='ckfs mo'; COMP_POINT=7; _ckfs ckfs mo ckfs; echo "1: ${COMPREPLY[*]}"
            COMP_WORDS=(ckfs mount --read); COMP_CWORD=2; COMP_LINE='ckfs mount --read'; COMP_POINT=17; _ckfs ckfs --read mount; echo "2: ${COMPREPLY[*]}"
            """, in: work)
        #expect(completed.stdout.contains("1: mount\n"), "\(completed.stdout) \(completed.stderr)")
        #expect(completed.stdout.contains("--read-only"), "\(completed.stdout) \(completed.stderr)")
        for file in ["/share/zsh/site-functions/_ckfs", "/share/fish/vendor_completions.d/ckfs.fish"] {
            #expect(((try? String(contentsOfFile: prefix + file, encoding: .utf8)) ?? "").contains("mount"), "\(file)")
        }

        // 4. mount -t fuse.ckfs and an fstab line, through mount(8) and the installed helper.
        let store = work + "/store"
        #expect(CLIFixture.exec(ckfs, ["init", "--store", store]).status == 0)
        // The installed ckfs finds the installed server: `ckfs serve` answers, and stops on SIGTERM.
        let serve = try Spawned(ckfs, ["serve", "--port", "0", "--store", store], stderr: .pipe)
        let listening = serve.output { $0.contains("\n") }
        #expect(listening.hasPrefix("listening on http://127.0.0.1:"), "\(listening) \(serve.errorOutputToEnd)")
        serve.signal(SIGTERM)
        #expect(serve.wait() == 0)
        for dir in ["M", "fstab-M", "unit-M"] { try FileManager.default.createDirectory(atPath: work + "/" + dir, withIntermediateDirectories: true) }
        let mounted = Self.bash("mount -t fuse.ckfs '\(store)' M -o allow_other,container=iCloud.local.ckfs", in: work)
        #expect(mounted.status == 0, "\(mounted.stderr)")
        #expect(Self.isMounted(work + "/M")?.contains("allow_other") == true)
        let saved = Self.bash("""
            mkdir M/iCloud.local.ckfs/private/_defaultZone/Note
            echo '{"fields":{"title":"via mount -t"}}' > M/iCloud.local.ckfs/private/_defaultZone/Note/t.json
            '\(ckfs)' record fetch t --store '\(store)'
            umount M
            """, in: work)
        #expect(saved.status == 0 && saved.stdout.contains("via mount -t"), "\(saved.stderr)")
        #expect(Self.isMounted(work + "/M") == nil)
        // A record of an identity that is no OS user, read through the installed (static) mount:
        // its owner is looked up by uid, which /etc/passwd lacks. glibc's other name services
        // (libnss_systemd) crashed the static daemon there; it reads /etc/passwd itself now.
        let stranger = Self.bash("""
            mount -t fuse.ckfs '\(store)' M -o allow_other
            echo '{"recordType":"Poster","recordName":"gig","fields":{"band":"Mei"}}' | '\(ckfs)' record save --database public --user stranger --store '\(store)' > /dev/null
            for i in $(seq 50); do test -e M/iCloud.local.ckfs/public/_defaultZone/Poster/gig.json && break; sleep 0.1; done
            ls -ln M/iCloud.local.ckfs/public/_defaultZone/Poster && cat M/iCloud.local.ckfs/public/_defaultZone/Poster/gig.json
            """, in: work)
        #expect(stranger.status == 0 && stranger.stdout.contains("Mei"), "\(stranger.stdout) \(stranger.stderr)")
        #expect(Self.isMounted(work + "/M") != nil, "the mount's daemon died")
        #expect(Self.bash("umount M", in: work).status == 0)

        try "\(store) \(work)/fstab-M fuse.ckfs ro,noauto,nofail,_netdev 0 0\n".write(toFile: work + "/fstab", atomically: true, encoding: .utf8)
        let fromFstab = Self.bash("mount -T fstab '\(work)/fstab-M' && cat fstab-M/iCloud.local.ckfs/private/_defaultZone/Note/t.json && ! touch fstab-M/x", in: work)
        #expect(fromFstab.status == 0 && fromFstab.stdout.contains("via mount -t"), "\(fromFstab.stderr)")
        #expect(Self.isMounted(work + "/fstab-M")?.contains(" ro,") == true, "the fstab line's ro did not reach the mount")
        #expect(Self.bash("umount fstab-M", in: work).status == 0)

        // 5. The example systemd unit: its ExecStart keeps the mount in front until its ExecStop.
        let unit = try String(contentsOfFile: checkout + "/contrib/systemd/ckfs-mount.service", encoding: .utf8)
        func value(_ key: String) throws -> String {
            let line = try #require(unit.split(separator: "\n").first { $0.hasPrefix(key + "=") }, "no \(key)= in the unit")
            return String(line.dropFirst(key.count + 1))
                .replacingOccurrences(of: "/usr/local/bin/ckfs", with: ckfs)
                .replacingOccurrences(of: "/mnt/ckfs", with: work + "/unit-M")
        }
        let start = try value("ExecStart"), stop = try value("ExecStop")
        let unitEnv = ["CKFS_STORE": store, "CKFS_LOG_LEVEL": "debug"]
        let service = try Spawned("/bin/sh", ["-c", "exec " + start],
                                  environment: ProcessInfo.processInfo.environment.merging(unitEnv) { $1 }, stdout: .null)
        let deadline = Date().addingTimeInterval(15)
        while Self.isMounted(work + "/unit-M") == nil && Date() < deadline && service.isRunning { usleep(50_000) }
        #expect(Self.isMounted(work + "/unit-M") != nil, "the unit's ExecStart did not mount")
        #expect(FileManager.default.fileExists(atPath: work + "/unit-M/iCloud.local.ckfs/private/_defaultZone/Note/t.json"))
        #expect(Self.bash(stop, in: work, environment: unitEnv).status == 0)
        #expect(service.wait(seconds: 10) != nil, "ExecStart's process did not end after ExecStop")
        #expect(Self.isMounted(work + "/unit-M") == nil)
    }
}
