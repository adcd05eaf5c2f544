import Foundation
import Testing
import TestSupport

/// Temporary files in the mount are the daemon's memory: bounded per user (EDQUOT) and freed
/// when removed.
@Suite struct ScratchBoundTests {
    private func rssMiB(_ pid: pid_t) throws -> Int {
        let status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
        let line = try #require(status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") })
        return try #require(Int(line.split(separator: " ").dropFirst().first ?? "")) / 1024
    }

    @Test func temporaryFilesAreBoundedPerUserAndFreedWhenRemoved() throws {
        let m = try MountFixture()
        let before = try rssMiB(m.pid)
        // Eight 16 MiB temporary files: the fifth passes the 64 MiB a user may keep.
        let script = #"""
        python3 - <<'PY'
        import errno, os
        d = 'M/\#(MountFixture.container)/private/Notes/Note'
        out = []
        for i in range(8):
            try:
                with open('%s/.big%d' % (d, i), 'wb') as f: f.write(b'x' * (16 << 20))
                out.append('ok')
            except OSError as e:
                out.append(errno.errorcode[e.errno])
        print(' '.join(out))
        PY
        """#
        let r = m.sh(script)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout == "ok ok ok ok EDQUOT EDQUOT EDQUOT EDQUOT\n", "\(r.stdout)")
        #expect(try rssMiB(m.pid) - before < 160, "the daemon grew by more than the bound")
        #expect(m.mountLog.contains("temporary files in the mount hold 64 MiB at most"), "\(m.mountLog.suffix(500))")
        // Removed, they make room again.
        #expect(m.sh("rm -f M/\(MountFixture.container)/private/Notes/Note/.big*").status == 0)
        let again = m.sh(script)
        #expect(again.stdout.hasPrefix("ok ok ok ok EDQUOT"), "\(again.stdout)")
    }
}
