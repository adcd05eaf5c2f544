import Foundation
import Testing
import TestSupport
@testable import CloudStore

/// `<container>/shared/<owner>/…` with four OS users in one `--allow-other` mount: ann shares a
/// list with bob (read-write) and cat (read-only); dan is in no share. Each sees exactly what
/// the share grants, with real tools, before and after accepting, after removal and after the
/// share is deleted. Needs root (to add users); CI runs as root, so there it always runs.
@Suite(.serialized) struct SharedMountTests {
    typealias Users = MultiUserMountTests.OSUsers

    @Test(.enabled(if: MultiUserMountTests.canRun, "needs root to create OS users (CI runs as root)"))
    func participantsSeeWhatTheShareGrantsThroughTheMount() throws {
        let users = Users()
        let ann = try users.add("ckann"), bob = try users.add("ckbob"), cat = try users.add("ckcat"), dan = try users.add("ckdan")
        let c = MountFixture.container
        let m = try MountFixture(demo: false, base: "/var/tmp/ckfs-shared-mount-tests", mountArgs: ["--allow-other"]) { store in
            for (name, uid) in [("ann", ann.uid), ("bob", bob.uid), ("cat", cat.uid), ("dan", dan.uid)] {
                let r = CLIFixture.exec(CLIFixture.binary, ["user", "add", name, "--uid", String(uid), "--store", store])
                guard r.status == 0 else { throw CKError(.internalError, "user add \(name): \(r.stderr)") }
            }
        }
        #expect(chmod(m.root, 0o755) == 0 && chmod(MultiUserMountTests.base(m), 0o755) == 0)
        func sh(_ user: (name: String, uid: UInt32), _ script: String) -> CLIFixture.Output { MultiUserMountTests.sh(m, as: user.name, script) }
        func cli(_ args: [String], as user: String = "ann") -> CLIFixture.Output {
            CLIFixture.exec(CLIFixture.binary, args + ["--store", m.store, "--user", user])
        }

        // Ann makes a list with an item, and a note of her own, through the mount.
        let mine = "M/\(c)/private/Lists"
        let made = sh(ann, #"""
            mkdir -p \#(mine)/List \#(mine)/Item \#(mine)/Note &&
            echo '{"fields":{"title":"Groceries"}}' > \#(mine)/List/groceries.json &&
            echo '{"parent":{"recordName":"groceries"},"fields":{"text":"milk"}}' > \#(mine)/Item/milk.json &&
            echo '{"fields":{"text":"ann only"}}' > \#(mine)/Note/diary.json
            """#)
        #expect(made.status == 0, "\(made.stderr) \(m.mountLog)")
        let share = cli(["share", "create", "groceries", "--zone", "Lists"])
        #expect(share.status == 0, "\(share.stderr)")
        let url = share.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(cli(["share", "add-participant", url, "bob", "--permission", "read-write"]).status == 0)
        #expect(cli(["share", "add-participant", url, "cat"]).status == 0)

        // Before accepting, shared/ is empty for everyone.
        for user in [bob, cat, dan] {
            let r = sh(user, "ls -A M/\(c)/shared")
            #expect(r.status == 0 && r.stdout.isEmpty, "\(user.name): \(r.stdout) \(r.stderr)")
        }
        #expect(cli(["share", "accept", url], as: "bob").status == 0)
        #expect(cli(["share", "accept", url], as: "cat").status == 0)

        // Both see ann's folder, the zone, the hierarchy and the share, never the note; the
        // files are ann's, writable by bob and not by cat.
        let zone = "M/\(c)/shared/ann/Lists"
        for (user, mode) in [(bob, "666"), (cat, "644")] {
            let listed = sh(user, "ls M/\(c)/shared M/\(c)/shared/ann && ls \(zone) && ls \(zone)/Item")
            #expect(listed.stdout == "M/\(c)/shared:\nann\n\nM/\(c)/shared/ann:\nLists\nItem\nList\ncloudkit.share\nmilk.json\n",
                    "\(user.name): \(listed.stdout) \(listed.stderr)")
            #expect(sh(user, "cat \(zone)/Item/milk.json").stdout.contains("\"milk\""))
            let note = sh(user, "cat \(zone)/Note/diary.json")
            #expect(note.status != 0 && !note.stdout.contains("ann only"), "\(user.name) read the note: \(note.stdout)")
            #expect(sh(user, "stat -c '%u %a' \(zone)/Item/milk.json").stdout == "\(ann.uid) \(mode)\n")
            // tar reads the hierarchy and nothing else.
            let archive = sh(user, "tar -cf - -C \(zone) . | tar -tf - | sort")
            #expect(archive.status == 0 && archive.stdout.contains("./Item/milk.json") && !archive.stdout.contains("Note"),
                    "\(user.name): \(archive.stdout) \(archive.stderr)")
        }
        // Dan has no share: no folder, nothing under ann's name.
        #expect(sh(dan, "ls -A M/\(c)/shared").stdout.isEmpty)
        #expect(sh(dan, "ls M/\(c)/shared/ann").status != 0)
        // Until ann shares a whole zone with him, read-only: then he sees all of it, and only it.
        #expect(sh(ann, #"mkdir -p M/\#(c)/private/Trip/Plan && echo '{"fields":{"day":1}}' > M/\#(c)/private/Trip/Plan/day1.json"#).status == 0)
        let trip = cli(["share", "create", "--whole-zone", "--zone", "Trip"]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(cli(["share", "add-participant", trip, "dan"]).status == 0 && cli(["share", "accept", trip], as: "dan").status == 0)
        let dans = sh(dan, "ls M/\(c)/shared/ann && stat -c '%u %a' M/\(c)/shared/ann/Trip/Plan/day1.json")
        #expect(dans.stdout == "Trip\n\(ann.uid) 644\n", "\(dans.stdout) \(dans.stderr)")
        #expect(sh(bob, "ls M/\(c)/shared/ann").stdout == "Lists\n")

        // Bob edits the item with sed and adds one with its parent: saved in ann's zone, and
        // read at once by ann and cat, who had read it before.
        #expect(sh(ann, "cat \(mine)/Item/milk.json").stdout.contains("\"milk\""))
        let edit = sh(bob, "sed -i 's/\"milk\"/\"oat milk\"/' \(zone)/Item/milk.json")
        #expect(edit.status == 0, "\(edit.stderr) \(m.mountLog)")
        #expect(sh(ann, "cat \(mine)/Item/milk.json").stdout.contains("oat milk"))
        #expect(sh(cat, "cat \(zone)/Item/milk.json").stdout.contains("oat milk"))
        let add = sh(bob, #"echo '{"parent":{"recordName":"groceries"},"fields":{"text":"eggs"}}' > \#(zone)/Item/eggs.json"#)
        #expect(add.status == 0, "\(add.stderr) \(m.mountLog)")
        let annDB = try Store.open(at: m.store).container().database(.private, caller: Caller(userName: "ann"))
        func text(_ name: String) -> FieldValue? { try? annDB.record(for: RecordID(recordName: name, zoneID: annDB.zoneID("Lists")))["text"] }
        #expect(text("milk") == .string("oat milk") && text("eggs") == .string("eggs"))
        #expect(sh(ann, "cat \(mine)/Item/eggs.json").stdout.contains("\"eggs\""), "ann sees bob's item in her own zone")
        #expect(sh(cat, "cat \(zone)/Item/eggs.json").stdout.contains("\"eggs\""), "cat sees it too")
        // A record outside the hierarchy is refused, its text kept in lost+found.
        // (`cp` reports the refused save at close, which a shell's `>` does not.)
        let loose = sh(bob, #"t=$(mktemp) && echo '{"fields":{"text":"loose"}}' > $t && cp $t \#(zone)/Item/loose.json; s=$?; rm -f $t; exit $s"#)
        #expect(loose.status != 0 && loose.stderr.contains("Permission denied"), "\(loose.stderr)")
        #expect(text("loose") == nil)
        #expect(sh(bob, "cat M/lost+found/*loose*").stdout.contains("\"loose\""), "\(m.mountLog)")
        // Cat may not change or remove anything; nothing changes.
        for script in [#"echo '{"fields":{"text":"cat"}}' > \#(zone)/Item/milk.json"#, "sed -i s/oat/cat/ \(zone)/Item/milk.json",
                       "rm -f \(zone)/Item/milk.json", "mv \(zone)/Item/milk.json \(zone)/Item/milk.bak"] {
            let r = sh(cat, script)
            #expect(r.status != 0 && r.stderr.contains("Permission denied"), "cat ran \(script): \(r.stderr)")
        }
        #expect(text("milk") == .string("oat milk"))
        // Bob may not remove the zone or make one in ann's folder.
        #expect(sh(bob, "rmdir \(zone)").status != 0)
        #expect(sh(bob, "mkdir M/\(c)/shared/ann/Mine").status != 0)
        #expect(text("milk") == .string("oat milk"))

        // Only ann moves or removes the hierarchy's root: refused before anything is done.
        for script in ["mv \(zone)/List/groceries.json \(zone)/List/groceries.bak", "rm \(zone)/List/groceries.json"] {
            let r = sh(bob, script)
            #expect(r.status != 0 && r.stderr.contains("Permission denied"), "bob ran \(script): \(r.stderr)")
        }
        #expect(sh(bob, "ls \(zone)/List").stdout == "groceries.json\n")
        // Bob's folder is his alone: dan, handed bob's working folder, reads and saves nothing
        // through it (the uid switch keeps root as saved uid to make the second one).
        let handed = CLIFixture.exec("/usr/bin/python3", ["-c", """
            import os, sys
            os.setresuid(\(bob.uid), \(bob.uid), 0); os.chdir(sys.argv[1]); os.setresuid(0, 0, 0); os.setresuid(\(dan.uid), \(dan.uid), 0)
            for how in (lambda: open("milk.json").read(), lambda: os.listdir("."), lambda: open("dan.json", "w").write("{}")):
                try:
                    how(); print("reached")
                except PermissionError:
                    print("refused")
            """, m.root + "/" + zone + "/Item"])
        #expect(handed.stdout == "refused\nrefused\nrefused\n", "\(handed.stdout) \(handed.stderr)")

        // Cat removed: her view ends at once, even for a file she read before; bob keeps his.
        #expect(cli(["share", "remove-participant", url, "cat"]).status == 0)
        let after = sh(cat, "cat \(zone)/Item/milk.json")
        #expect(after.status != 0 && !after.stdout.contains("milk"), "\(after.stdout) \(m.mountLog)")
        #expect(sh(cat, "ls -A M/\(c)/shared").stdout.isEmpty)
        #expect(sh(bob, "cat \(zone)/Item/milk.json").stdout.contains("oat milk"))

        // Ann deletes the share with rm: bob's view ends too; her records stay hers.
        let shareFile = sh(ann, "ls \(mine)/cloudkit.share").stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(sh(ann, "rm \(mine)/cloudkit.share/\(shareFile)").status == 0, "\(m.mountLog)")
        let ended = sh(bob, "cat \(zone)/Item/milk.json")
        #expect(ended.status != 0 && !ended.stdout.contains("milk"), "\(ended.stdout)")
        #expect(sh(bob, "ls -A M/\(c)/shared").stdout.isEmpty)
        #expect(sh(ann, "cat \(mine)/Item/milk.json").stdout.contains("oat milk"))
    }
}
