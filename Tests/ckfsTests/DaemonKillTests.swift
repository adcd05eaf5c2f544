import Foundation
import Testing
import TestSupport
@testable import CloudStore
import CloudStoreFS

/// `kill -9` of the mount daemon while editors rename files in a folder and the CLI saves
/// into the same zone: the kernel must let go of every client (none left waiting on the dead
/// daemon, none unkillable), the mount comes back, and `fsck` finds the store clean.
@Suite(.serialized) struct DaemonKillTests {
    @Test func killingTheDaemonUnderWritersNeverWedgesTheMount() throws {
        let m = try MountFixture(demo: false)
        let dir = m.mount + "/\(MountFixture.container)/public/_defaultZone/Note"
        #expect(m.sh("mkdir '\(dir)'").status == 0)
        let kills = 20
        var wedges = 0
        for round in 0..<kills {
            if round > 0 { try m.start() }
            // An editor's save: a new file in the folder, then a rename onto the record (the
            // rename holds the folder's lock in the kernel while the daemon answers).
            let editor = try Spawned("/usr/bin/env", ["python3", "-c", """
            import os, sys
            d = sys.argv[1]
            i = 0
            while True:
                try:
                    tmp = '%s/.e%d' % (d, i)
                    with open(tmp, 'w') as f: f.write('{"fields": {"n": {"value": %d}}}' % i)
                    os.rename(tmp, '%s/r%d.json' % (d, i % 20))
                except OSError:
                    break
                i += 1
            """, dir], stdout: .inherit, stderr: .inherit)
            // Saves from outside the mount make the daemon drop the kernel's names in that folder.
            let saver = try Spawned("/bin/sh", ["-c", """
            i=0; while [ $i -lt 400 ]; do echo '{"recordType":"Note","recordName":"c'$((i % 20))'","fields":{"n":'$i'}}' \
              | '\(CLIFixture.binary)' record save --store '\(m.store)' --database public >/dev/null 2>&1 || exit 0; i=$((i+1)); done
            """], stdout: .inherit, stderr: .inherit)
            usleep(useconds_t(150_000 + (round % 5) * 60_000))
            #expect(kill(m.pid, SIGKILL) == 0)
            // Every client lets go within seconds of the daemon's death.
            if editor.wait(seconds: 10) == nil {
                wedges += 1
                // Free it so the test ends: what the mount should have done itself.
                _ = FuseConnection.at(m.mount)?.abort()
                editor.wait()
            }
            saver.signal(SIGTERM)
            saver.wait()
            let down = m.cli(["unmount", m.mount])
            #expect(down.status == 0, "round \(round): \(down.stderr)")
            let check = m.cli(["fsck"])
            #expect(check.status == 0, "round \(round): \(check.stdout) \(check.stderr)")
        }
        #expect(wedges == 0, "\(wedges) of \(kills) kills left a client waiting on the dead daemon")
        try m.start()
        #expect(m.sh("ls '\(dir)' | grep -c json").stdout.trimmingCharacters(in: .whitespacesAndNewlines) != "0")
    }
}
