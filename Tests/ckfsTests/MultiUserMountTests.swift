import Foundation
import Testing
import TestSupport
@testable import CloudStore

/// Two real OS users in one `--allow-other` mount (root, as CI runs): each sees only its own private data and key-value store, also through `..`,
/// symlinks and hard links; a public record is its creator's unless a write role says
/// otherwise; a user the container does not know has no account. Needs root (to add users);
/// CI runs as root, so there it always runs.
@Suite(.serialized) struct MultiUserMountTests {
    static let canRun = geteuid() == 0 || ProcessInfo.processInfo.environment["CI"] != nil

    /// OS users made for one test and removed after it.
    final class OSUsers {
        var names: [String] = []
        func add(_ prefix: String) throws -> (name: String, uid: UInt32) {
            let name = prefix + String(UUID().uuidString.prefix(6)).lowercased()
            let r = CLIFixture.exec("/usr/sbin/useradd", ["-M", "-N", "-s", "/bin/sh", name])
            guard r.status == 0, let pw = getpwnam(name) else { throw CKError(.internalError, "useradd \(name) failed: \(r.stderr)") }
            names.append(name)
            return (name, pw.pointee.pw_uid)
        }
        deinit { for n in names { _ = CLIFixture.exec("/usr/sbin/userdel", [n]) } }
    }

    /// Runs a shell script as `user`, in the fixture's root.
    static func sh(_ m: MountFixture, as user: String, _ script: String) -> CLIFixture.Output {
        CLIFixture.exec("/usr/sbin/runuser", ["-u", user, "--", "/bin/sh", "-c", "cd '\(m.root)' && " + script],
                        environment: ["PATH": "/usr/bin:/bin", "LC_ALL": "C"])
    }

    @Test(.enabled(if: canRun, "needs root to create OS users (CI runs as root)"))
    func eachUserSeesOnlyTheirOwnPrivateDataAndPublicRecordsNeedOwnershipOrARole() throws {
        let users = OSUsers()
        let ann = try users.add("ckann"), bob = try users.add("ckbob"), cat = try users.add("ckcat")
        let c = MountFixture.container
        let m = try MountFixture(demo: false, base: "/var/tmp/ckfs-multiuser-tests", mountArgs: ["--allow-other"]) { store in
            // Ann under another name than her OS user's (found by uid), Bob by his own; Cat is
            // unknown and, with auto-enrolment off, has no account.
            for args in [["user", "add", "ann", "--uid", String(ann.uid)], ["user", "add", bob.name, "--uid", String(bob.uid)],
                         ["user", "auto-enrol", "off"]] {
                let r = CLIFixture.exec(CLIFixture.binary, args + ["--store", store])
                guard r.status == 0 else { throw CKError(.internalError, "\(args): \(r.stderr)") }
            }
        }
        #expect(chmod(m.root, 0o755) == 0 && chmod(Self.base(m), 0o755) == 0)
        let shared = m.root + "/shared"
        try FileManager.default.createDirectory(atPath: shared, withIntermediateDirectories: true)
        #expect(chmod(shared, 0o1777) == 0)
        let annPrivate = "M/\(c)/private/_defaultZone/Note"

        // Ann writes a private record and a key-value entry.
        let write = Self.sh(m, as: ann.name, #"mkdir -p \#(annPrivate) && echo '{"fields":{"text":"ann secret"}}' > \#(annPrivate)/a.json && printf '<string>ann</string>' > M/\#(c)/keyvalue/who.plist && cat \#(annPrivate)/a.json"#)
        #expect(write.status == 0 && write.stdout.contains("ann secret"), "\(write.stderr) \(m.mountLog)")
        let annDB = try Store.open(at: m.store).container().database(.private, caller: Caller(userName: "ann"))
        #expect(try annDB.record(for: RecordID(recordName: "a"))["text"] == .string("ann secret"))
        let owner = Self.sh(m, as: ann.name, "stat -c '%u %a' M/\(c)/private M/\(c)/private/_defaultZone/Note/a.json")
        #expect(owner.stdout == "\(ann.uid) 700\n\(ann.uid) 600\n")

        // Bob sees his own (empty) private database and key-value store, never Ann's.
        for path in ["\(annPrivate)/a.json", "M/\(c)/private/../private/_defaultZone/Note/a.json",
                     "M/\(c)/public/../private/_defaultZone/Note/a.json", "M/\(c)/keyvalue/who.plist"] {
            let r = Self.sh(m, as: bob.name, "cat \(path)")
            #expect(r.status != 0 && !r.stdout.contains("ann"), "bob read \(path): \(r.stdout)")
        }
        let bobList = Self.sh(m, as: bob.name, "ls -A M/\(c)/private/_defaultZone M/\(c)/keyvalue; stat -c '%u' M/\(c)/private")
        #expect(bobList.status == 0 && !bobList.stdout.contains("Note") && !bobList.stdout.contains("who"), "\(bobList.stdout)")
        #expect(bobList.stdout.hasSuffix("\(bob.uid)\n"), "bob's private folder is his")
        let bobWrite = Self.sh(m, as: bob.name, #"mkdir -p \#(annPrivate) && echo '{"fields":{"text":"bob"}}' > \#(annPrivate)/a.json"#)
        #expect(bobWrite.status == 0, "bob writes his own a.json: \(bobWrite.stderr)")
        #expect(try annDB.record(for: RecordID(recordName: "a"))["text"] == .string("ann secret"))

        // A symlink Ann makes to her record is resolved as whoever follows it.
        #expect(Self.sh(m, as: ann.name, "ln -s '\(m.root)/\(annPrivate)/a.json' shared/link && cat shared/link").stdout.contains("ann secret"))
        let viaLink = Self.sh(m, as: bob.name, "cat shared/link")
        #expect(!viaLink.stdout.contains("ann"), "\(viaLink.stdout)")
        // No hard links out of the mount or inside it, no symlinks inside it.
        let hard = Self.sh(m, as: ann.name, "ln \(annPrivate)/a.json shared/hard")
        #expect(hard.status != 0 && hard.stderr.contains("cross-device"), "\(hard.stderr)")
        #expect(Self.sh(m, as: ann.name, "ln \(annPrivate)/a.json \(annPrivate)/b.json").status != 0)
        #expect(Self.sh(m, as: ann.name, "ln -s a.json \(annPrivate)/l.json").status != 0)
        #expect(!FileManager.default.fileExists(atPath: shared + "/hard"))

        // Public records: Ann's is hers; Bob cannot change, move or remove it; nothing is lost.
        let pub = "M/\(c)/public/_defaultZone/Note"
        #expect(Self.sh(m, as: ann.name, #"mkdir -p \#(pub) && echo '{"fields":{"text":"ann public"}}' > \#(pub)/p.json"#).status == 0)
        #expect(Self.sh(m, as: bob.name, "stat -c '%u %a' \(pub)/p.json").stdout == "\(ann.uid) 644\n")
        let publicDB = try Store.open(at: m.store).container().database(.public, caller: Caller(userName: "ann"))
        func publicText() throws -> FieldValue? { try publicDB.record(for: RecordID(recordName: "p"))["text"] }
        #expect(Self.sh(m, as: bob.name, #"echo '{"fields":{"text":"bob"}}' > \#(pub)/p.json"#).status != 0)
        #expect(Self.sh(m, as: bob.name, "sed -i s/ann/bob/ \(pub)/p.json").status != 0)
        #expect(Self.sh(m, as: bob.name, "rm -f \(pub)/p.json").status != 0)
        #expect(Self.sh(m, as: bob.name, "mv \(pub)/p.json \(pub)/p.bak").status != 0)
        #expect(try publicText() == .string("ann public"))
        #expect(Self.sh(m, as: ann.name, "cat \(pub)/p.json").stdout.contains("ann public"), "still there, under its name")
        #expect(Self.sh(m, as: bob.name, "cat \(pub)/p.json").stdout.contains("ann public"), "public data reads")
        // Bob's own public record is his.
        #expect(Self.sh(m, as: bob.name, #"echo '{"fields":{"text":"bob public"}}' > \#(pub)/q.json"#).status == 0)
        #expect(Self.sh(m, as: ann.name, "rm -f \(pub)/q.json").status != 0)
        // Ann renames hers away (as an editor's backup does); Bob's refused `rm` of that name
        // changes nothing, for anyone.
        #expect(Self.sh(m, as: ann.name, "mv \(pub)/p.json \(pub)/p.bak").status == 0)
        let refusedRemoval = Self.sh(m, as: bob.name, "rm -f \(pub)/p.bak")
        #expect(refusedRemoval.status != 0 && refusedRemoval.stderr.contains("Permission denied"), "\(refusedRemoval.stderr)")
        for user in [ann.name, bob.name] {
            #expect(Self.sh(m, as: user, "cat \(pub)/p.bak").stdout.contains("ann public"), "\(user) still sees p.bak")
        }
        #expect(try publicText() == .string("ann public"))
        #expect(Self.sh(m, as: ann.name, "mv \(pub)/p.bak \(pub)/p.json && cat \(pub)/p.json").stdout.contains("ann public"))

        // With a write role for Note, Bob may edit and remove Ann's.
        let role = CLIFixture.exec(CLIFixture.binary, ["user", "update", bob.name, "--grant-write", "Note", "--store", m.store])
        #expect(role.status == 0, "\(role.stderr)")
        usleep(1_200_000) // the kernel keeps attributes for a second
        #expect(Self.sh(m, as: bob.name, "stat -c '%a' \(pub)/p.json").stdout == "666\n")
        let edit = Self.sh(m, as: bob.name, "sed -i s/ann/bob/ \(pub)/p.json")
        #expect(edit.status == 0, "\(edit.stderr) \(m.mountLog)")
        #expect(try publicText() == .string("bob public"))
        #expect(Self.sh(m, as: bob.name, "rm \(pub)/p.json").status == 0)
        #expect((try? publicDB.record(for: RecordID(recordName: "p"))) == nil)

        // Cat has no account: public reads, nothing writes, no private database.
        #expect(Self.sh(m, as: cat.name, "cat \(pub)/q.json").stdout.contains("bob public"))
        let catPrivate = Self.sh(m, as: cat.name, "ls M/\(c)/private")
        #expect(catPrivate.status != 0 && catPrivate.stderr.contains("Permission denied"), "\(catPrivate.stderr)")
        let catWrite = Self.sh(m, as: cat.name, #"echo '{"fields":{"text":"cat"}}' > \#(pub)/r.json"#)
        #expect(catWrite.status != 0 || (try? publicDB.record(for: RecordID(recordName: "r"))) == nil)
        #expect((try? publicDB.record(for: RecordID(recordName: "r"))) == nil)
        #expect(try Store.open(at: m.store).container().identities().map(\.name).sorted() == ["ann", bob.name].sorted())
    }

    /// The fixture's base directory, which other users must be able to pass through.
    static func base(_ m: MountFixture) -> String { (m.root as NSString).deletingLastPathComponent }
}
