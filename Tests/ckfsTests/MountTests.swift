import Foundation
import Testing
import TestSupport
@testable import CloudStore

/// The FUSE view on a real mount: Unix tools and editors against
/// `ckfs mount`, checked through the library and the store's own files.
@Suite(.serialized) struct MountTests {
    @Test func toolsSeeWhatTheStoreHolds() throws {
        let m = try MountFixture()
        let pub = try m.database(.public)
        let priv = try m.database(.private)
        // find lists exactly the records of both databases, in folders by type.
        var expected: [String] = []
        for r in try pub.allRecords() { expected.append("public/_defaultZone/\(r.recordType)/\(r.recordID.recordName).json") }
        for r in try priv.allRecords(in: "Notes") { expected.append("private/Notes/\(r.recordType)/\(r.recordID.recordName).json") }
        let found = m.sh("cd M/\(MountFixture.container) && find . -name '*.json' | sed 's|^./||' | sort")
        #expect(found.status == 0)
        #expect(found.stdout.split(separator: "\n").map(String.init) == expected.sorted())

        // cat shows the canonical JSON, and stat's size is the size of what cat shows.
        let welcome = try pub.record(for: RecordID(recordName: "welcome", zoneID: pub.zoneID("_defaultZone")))
        let canonical = String(decoding: JSONWriter.pretty(RecordCoding.encode(welcome)), as: UTF8.self)
        #expect(m.read(m.publicZone + "/Note/welcome.json") == canonical)
        let st = m.sh("stat -c '%s %Y %U %A' M/\(MountFixture.container)/public/_defaultZone/Note/welcome.json")
        let parts = st.stdout.split(separator: " ")
        #expect(parts.first.map(String.init) == String(canonical.utf8.count))
        #expect(parts.count == 4 && Int64(parts[1]) == welcome.modified!.timestamp / 1000, "mtime is modificationDate")
        #expect(parts.last?.hasPrefix("-rw-r--r--") == true)
        #expect(String(parts[2]) == MountFixture.user, "a public record belongs to its creator")

        // ls -l agrees with stat; grep -r finds field values; du counts the bytes.
        let ls = m.sh("ls -l M/\(MountFixture.container)/private/Notes/Note")
        #expect(ls.stdout.contains("-rw------- 1 \(MountFixture.user)"), "\(ls.stdout)")
        #expect(ls.stdout.contains("groceries.json"))
        let grep = m.sh("grep -rl 'Old lighthouse' M")
        #expect(grep.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "M/\(MountFixture.container)/public/_defaultZone/Place/lighthouse.json")
        let du = m.sh("du -sb M/\(MountFixture.container)/public | cut -f1")
        #expect((Int(du.stdout.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0) > canonical.utf8.count)

        // df shows the quotas as the disk's size and the usage as its use.
        let df = m.sh("df -B1 --output=size,used M | tail -1")
        let nums = df.stdout.split(whereSeparator: { $0 == " " || $0 == "\n" }).compactMap { Int64($0) }
        let settings = StoreSettings()
        #expect(nums.count == 2)
        #expect(nums.first == (settings.privateQuotaBytes + settings.publicQuotaBytes) / 4096 * 4096)
        let usage = try pub.usage() + priv.usage()
        #expect(nums.last == (usage + 4095) / 4096 * 4096)
    }

    // CONTRIBUTING.md's example of a mount test, as it stands there (scripts/doc-harness/swift-test).
    @Test func vimSavesTheRecord() throws {
        let m = try MountFixture()
        let file = "M/\(MountFixture.container)/public/_defaultZone/Note/welcome.json"
        #expect(m.sh("vim -Nu NONE -i NONE -es -c '%s/Welcome to ckfs/Edited in vim/' -c wq \(file)").status == 0)
        let pub = try m.database(.public)
        let saved = try pub.record(for: RecordID(recordName: "welcome", zoneID: pub.zoneID("_defaultZone")))
        #expect(saved["title"] == .string("Edited in vim"))
    }

    @Test func vimSavesAnEditAndRefusesBrokenJSON() throws {
        let m = try MountFixture()
        let file = "M/\(MountFixture.container)/public/_defaultZone/Note/welcome.json"
        let ok = m.sh("vim -Nu NONE -i NONE -es -c '%s/Welcome to ckfs/Edited in vim/' -c wq \(file)")
        #expect(ok.status == 0, "\(ok.stderr)")
        let pub = try m.database(.public)
        let id = RecordID(recordName: "welcome", zoneID: pub.zoneID("_defaultZone"))
        let saved = try pub.record(for: id)
        #expect(saved["title"] == .string("Edited in vim"))
        #expect(saved.recordChangeTag != "1")
        #expect(m.sh("ls -A M/\(MountFixture.container)/public/_defaultZone/Note").stdout == "welcome.json\n", "no backup or swap file left")

        // :wq with no edit writes the same text: nothing is saved and nothing is lost.
        let same = m.sh("vim -Nu NONE -i NONE -es -c wq \(file)")
        #expect(same.status == 0, "\(same.stderr)")
        #expect(try pub.record(for: id) == saved)
        #expect(m.sh("ls -A M/\(MountFixture.container)/public/_defaultZone/Note").stdout == "welcome.json\n")

        let bad = m.sh("vim -Nu NONE -i NONE -es -c '%s/\"title\"/\"title/' -c wq \(file)")
        #expect(bad.status != 0, "vim reports the failed write")
        let after = try pub.record(for: id)
        #expect(after == saved, "the record is unchanged")
        #expect(m.read(m.publicZone + "/Note/welcome.json")?.contains("Edited in vim") == true)
        #expect(m.mountLog.contains("refused save of"))
    }

    @Test func sedInPlaceSavesAndABreakingSedChangesNothing() throws {
        let m = try MountFixture()
        let file = "M/\(MountFixture.container)/private/Notes/Note/groceries.json"
        #expect(m.sh("sed -i 's/milk, bread, apples/milk, eggs/' \(file)").status == 0)
        let priv = try m.database(.private)
        let id = RecordID(recordName: "groceries", zoneID: priv.zoneID("Notes"))
        let saved = try priv.record(for: id)
        #expect(saved["body"] == .string("milk, eggs"))

        let bad = m.sh("sed -i 's/\"fields\": {/\"fields\": [/' \(file)")
        #expect(bad.status != 0)
        #expect(try priv.record(for: id) == saved)
        #expect(m.sh("ls -A M/\(MountFixture.container)/private/Notes/Note").stdout == "groceries.json\n", "no temp file left")
    }

    /// After every kind of rename the new name reads as the item it holds, at once and
    /// again: a `sed -i` that matched nothing (its file renamed over the record saves
    /// nothing) left the name leading to the gone temp file, ENOENT for the next edit.
    @Test func theNameWorksAfterEveryKindOfRename() throws {
        let m = try MountFixture()
        let dir = "M/\(MountFixture.container)/private/Notes/Note"
        let file = dir + "/groceries.json"
        let priv = try m.database(.private)
        let id = RecordID(recordName: "groceries", zoneID: priv.zoneID("Notes"))
        let stored = try priv.record(for: id)
        #expect(m.sh("sed -i 's/no such text/x/' \(file)").status == 0)
        #expect(try priv.record(for: id) == stored, "nothing to save")
        let again = m.sh("sed -i 's/milk, bread, apples/milk, eggs/' \(file) && sed -i 's/milk, eggs/milk, tea/' \(file) && cat \(file)")
        #expect(again.status == 0, "\(again.stderr)")
        #expect(try priv.record(for: id)["body"] == .string("milk, tea"))
        let saved = try priv.record(for: id)
        #expect(again.stdout == m.read(m.mount + "/\(MountFixture.container)/private/Notes/Note/groceries.json"))
        #expect(again.stdout.contains("\"recordChangeTag\": \"\(saved.recordChangeTag!)\""), "the record's own bytes, new tag and all")
        // mv to another record name, to a scratch name and back: each name reads right.
        let moves = m.sh("""
            mv \(file) \(dir)/list.json && cat \(dir)/list.json > /dev/null && sed -i 's/tea/cocoa/' \(dir)/list.json &&
            mv \(dir)/list.json \(dir)/list.bak && grep -q cocoa \(dir)/list.bak && mv \(dir)/list.bak \(dir)/list.json &&
            sed -i 's/cocoa/coffee/' \(dir)/list.json && ls \(dir)
            """)
        #expect(moves.status == 0, "\(moves.stderr)")
        #expect(moves.stdout == "list.json\n")
        #expect(try priv.record(for: RecordID(recordName: "list", zoneID: priv.zoneID("Notes")))["body"] == .string("milk, coffee"))
        #expect(throws: CKError.self) { try priv.record(for: id) }
    }

    @Test func redirectsCreateRecordsAndBadTextLandsInLostAndFound() throws {
        let m = try MountFixture()
        let dir = "M/\(MountFixture.container)/public/_defaultZone/Note"
        let made = m.sh(#"echo '{"fields": {"title": "By redirect", "count": {"value": 2}}}' > \#(dir)/made.json"#)
        #expect(made.status == 0)
        let pub = try m.database(.public)
        let record = try pub.record(for: RecordID(recordName: "made", zoneID: pub.zoneID("_defaultZone")))
        #expect(record.recordType == "Note")
        #expect(record["title"] == .string("By redirect"))
        #expect(record["count"] == .int64(2))

        let before = m.read(m.mount + "/\(MountFixture.container)/public/_defaultZone/Note/made.json")
        #expect(m.sh("echo '{bad' > \(dir)/made.json").status == 0, "shells ignore close errors")
        #expect(try pub.record(for: record.recordID) == record)
        #expect(m.read(m.mount + "/\(MountFixture.container)/public/_defaultZone/Note/made.json") == before)
        let lost = try FileManager.default.contentsOfDirectory(atPath: m.mount + "/lost+found").sorted()
        #expect(lost.count == 2, "\(lost)")
        let text = lost.first { $0.hasSuffix(".json") }.flatMap { m.read(m.mount + "/lost+found/" + $0) }
        let reason = lost.first { $0.hasSuffix(".txt") }.flatMap { m.read(m.mount + "/lost+found/" + $0) }
        #expect(text == "{bad\n")
        #expect(reason?.contains("made.json") == true)
        #expect(reason?.contains("not valid JSON at line 1") == true, "\(reason ?? "")")
    }

    /// A field written with `"isEncrypted": true` is saved encrypted, shown with its flag, kept
    /// encrypted by `sed -i`; the public database refuses one, and its text goes to lost+found.
    @Test func encryptedFieldsThroughTheMount() throws {
        let m = try MountFixture()
        let dir = "M/\(MountFixture.container)/private/_defaultZone/Contact"
        #expect(m.sh("mkdir \(dir)").status == 0)
        let text = #"{"fields": {"name": "Ada", "phone": {"value": "+33 1 23", "type": "STRING", "isEncrypted": true}}}"#
        #expect(m.sh("echo '\(text)' > \(dir)/ada.json").status == 0)
        let priv = try m.database(.private)
        let id = RecordID(recordName: "ada", zoneID: priv.zoneID("_defaultZone"))
        #expect(try priv.record(for: id).encryptedKeys == ["phone"])
        #expect(m.sh("grep -c '\"isEncrypted\": true' \(dir)/ada.json").stdout == "1\n")
        #expect(m.sh("sed -i 's/+33 1 23/+33 1 24/' \(dir)/ada.json").status == 0)
        let edited = try priv.record(for: id)
        #expect(edited[encrypted: "phone"] == .string("+33 1 24") && edited.encryptedKeys == ["phone"])
        // Dropping only the flag is an edit too, and the schema refuses it: the field stays
        // encrypted, and the file says so again.
        #expect(m.sh("sed -i '/isEncrypted/d' \(dir)/ada.json").status != 0)
        #expect(try priv.record(for: id) == edited)
        #expect(m.sh("grep -c '\"isEncrypted\": true' \(dir)/ada.json").stdout == "1\n")

        let pub = "M/\(MountFixture.container)/public/_defaultZone/Note"
        #expect(m.sh("printf '%s' '\(text)' > \(m.root)/pub.json && cp \(m.root)/pub.json \(pub)/pub.json").status != 0)
        let lost = try FileManager.default.contentsOfDirectory(atPath: m.mount + "/lost+found")
        let reasons = lost.filter { $0.hasSuffix(".txt") }.compactMap { m.read(m.mount + "/lost+found/" + $0) }
        #expect(reasons.contains { $0.contains("public database") } && reasons.contains { $0.contains("ENCRYPTED_STRING") }, "\(lost) \(reasons)")
        #expect(lost.contains { $0.hasSuffix(".json") && m.read(m.mount + "/lost+found/" + $0) == text })
    }

    @Test func copyRemoveMoveAndZoneFolders() throws {
        let m = try MountFixture()
        let c = "M/\(MountFixture.container)"
        let pub = try m.database(.public)
        let zone = pub.zoneID("_defaultZone")
        // cp of a file from outside into a type folder creates a record.
        #expect(m.sh(#"printf '{"fields":{"title":"copied"}}' > outside.json && cp outside.json \#(c)/public/_defaultZone/Note/copied.json"#).status == 0)
        #expect(try pub.record(for: RecordID(recordName: "copied", zoneID: zone))["title"] == .string("copied"))
        // mv between record names saves the new one and deletes the old.
        let old = try pub.record(for: RecordID(recordName: "copied", zoneID: zone))
        #expect(m.sh("mv \(c)/public/_defaultZone/Note/copied.json \(c)/public/_defaultZone/Note/renamed.json").status == 0)
        #expect(try pub.record(for: RecordID(recordName: "renamed", zoneID: zone)).fields == old.fields)
        #expect(throws: CKError.self) { try pub.record(for: RecordID(recordName: "copied", zoneID: zone)) }
        // rm deletes.
        #expect(m.sh("rm \(c)/public/_defaultZone/Note/renamed.json").status == 0)
        #expect(throws: CKError.self) { try pub.record(for: RecordID(recordName: "renamed", zoneID: zone)) }
        // mkdir makes a zone and a type folder; rmdir of a non-empty zone fails; rm -r works.
        #expect(m.sh("mkdir \(c)/private/Work && mkdir \(c)/private/Work/Todo && echo '{\"fields\":{\"t\":\"x\"}}' > \(c)/private/Work/Todo/a.json").status == 0)
        let priv = try m.database(.private)
        #expect(try priv.zones().map(\.zoneID.zoneName).contains("Work"))
        #expect(try priv.record(for: RecordID(recordName: "a", zoneID: priv.zoneID("Work"))).recordType == "Todo")
        #expect(m.sh("rmdir \(c)/private/Work").status != 0)
        #expect(m.sh("rm -r \(c)/private/Work").status == 0)
        #expect(try !priv.zones().map(\.zoneID.zoneName).contains("Work"))
        // A record renamed to a name that is no record is hidden, not deleted, until the
        // copy is removed.
        #expect(m.sh("mv \(c)/public/_defaultZone/Note/welcome.json \(c)/public/_defaultZone/Note/welcome.bak").status == 0)
        #expect(try pub.record(for: RecordID(recordName: "welcome", zoneID: zone)).recordType == "Note")
        #expect(m.sh("ls \(c)/public/_defaultZone/Note").stdout == "welcome.bak\n")
        #expect(m.sh("mv \(c)/public/_defaultZone/Note/welcome.bak \(c)/public/_defaultZone/Note/welcome.json").status == 0)
        #expect(m.sh("ls \(c)/public/_defaultZone/Note").stdout == "welcome.json\n")
        #expect(m.sh("mv \(c)/public/_defaultZone/Note/welcome.json \(c)/public/_defaultZone/Note/gone.bak && rm \(c)/public/_defaultZone/Note/gone.bak").status == 0)
        #expect(throws: CKError.self) { try pub.record(for: RecordID(recordName: "welcome", zoneID: zone)) }
    }

    @Test func oversizedWritesAndStaleEditsFailAndKeepTheStoredRecord() throws {
        let m = try MountFixture()
        let file = "M/\(MountFixture.container)/public/_defaultZone/Note/welcome.json"
        let pub = try m.database(.public)
        let id = RecordID(recordName: "welcome", zoneID: pub.zoneID("_defaultZone"))
        let original = try pub.record(for: id)
        let big = m.sh("python3 -c \"import errno,sys\ntry:\n    f=open('\(file)','w'); f.write('x'*(2*1024*1024)); f.flush()\nexcept OSError as e:\n    print(errno.errorcode[e.errno])\"")
        #expect(big.stdout.contains("EFBIG"), "\(big.stdout) \(big.stderr)")
        #expect(try pub.record(for: id) == original)

        // Read a copy, let the CLI save a newer version, then write the copy back.
        #expect(m.sh("cp \(file) stale.json").status == 0)
        let newer = m.cli(["record", "save", "--database", "public"],
                          input: #"{"recordType":"Note","recordName":"welcome","recordChangeTag":"\#(original.recordChangeTag!)","fields":{"title":"newer"}}"#)
        #expect(newer.status == 0, "\(newer.stderr)")
        let stale = m.sh("python3 -c \"import errno\ntry:\n    f=open('\(file)','w'); f.write(open('stale.json').read()); f.close()\nexcept OSError as e:\n    print(errno.errorcode[e.errno])\"")
        #expect(stale.stdout.contains("ESTALE"), "\(stale.stdout) \(stale.stderr)")
        #expect(try pub.record(for: id)["title"] == .string("newer"))
        #expect(m.mountLog.contains("serverRecordChanged"))
    }

    @Test func aSaveThroughTheCLIShowsAtOnce() throws {
        let m = try MountFixture()
        let path = m.publicZone + "/Note/welcome.json"
        for i in 0..<20 {
            #expect(m.read(path) != nil)
            let r = m.cli(["record", "save", "--database", "public", "--policy", "all-keys"],
                          input: #"{"recordType":"Note","recordName":"welcome","fields":{"title":"cli \#(i)"}}"#)
            #expect(r.status == 0)
            let text = m.read(path) ?? ""
            #expect(text.contains("\"value\": \"cli \(i)\""), "round \(i): \(text.prefix(200))")
            #expect((try? JSONParser.parse(Array(text.utf8))) != nil, "whole JSON, not cut at an old size")
        }
        let created = m.cli(["record", "save", "--database", "public"], input: #"{"recordType":"Note","recordName":"brand-new","fields":{"x":1}}"#)
        #expect(created.status == 0)
        #expect(m.read(m.publicZone + "/Note/brand-new.json")?.contains("brand-new") == true)
        #expect(m.cli(["record", "delete", "--database", "public", "brand-new"]).status == 0)
        #expect(!FileManager.default.fileExists(atPath: m.publicZone + "/Note/brand-new.json"))
    }

    /// Every edit reads the text the edit before it saved. A loop of 1,000 `sed -i`-like
    /// edits in one process (read the file, write a temp file, rename it over the record) went
    /// ESTALE after 26-275 edits when an open found the zone "quiet" while the watcher was
    /// still taking the previous save into the catalog: the open served the version before it.
    @Test func anEditLoopAlwaysReadsItsLastSave() throws {
        // On tmpfs when there is one: a save there takes no disk time, so the next open comes
        // while the watcher is still at the last one (on disk the loop failed less often).
        let shm = FileManager.default.fileExists(atPath: "/dev/shm") ? "/dev/shm/ckfs-mount-tests" : MountFixture.base
        let m = try MountFixture(base: shm)
        let r = m.sh("""
        python3 -c "
        import os
        d = 'M/\(MountFixture.container)/private/Notes/Note'
        f = d + '/groceries.json'
        for i in range(1000):
            a, b = ('milk', 'Milk') if i % 2 == 0 else ('Milk', 'milk')
            text = open(f).read()
            assert a in text, (i, text[:300])
            tmp = '%s/.edit%d' % (d, i)
            fd = os.open(tmp, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600)
            os.write(fd, text.replace(a, b, 1).encode())
            os.close(fd)
            os.rename(tmp, f)
        print('done')
        "
        """)
        #expect(r.status == 0 && r.stdout.contains("done"), "\(r.stdout) \(r.stderr.suffix(600))")
        #expect(!m.mountLog.contains("serverRecordChanged"), "\(m.mountLog.suffix(800))")
        let db = try m.database(.private)
        let body = try db.record(for: RecordID(recordName: "groceries", zoneID: db.zoneID("Notes")))["body"]
        #expect(body == .string("milk, bread, apples"), "\(String(describing: body))")
    }

    @Test func pythonReadsRecordsWithJSON() throws {
        let m = try MountFixture()
        let r = m.sh("""
        python3 -c "
        import json, glob
        for p in sorted(glob.glob('M/*/*/*/*/*.json')):
            r = json.load(open(p))
            assert p.endswith('/' + r['recordType'] + '/' + r['recordName'] + '.json'), p
            print(r['recordName'], sorted(r['fields']))
        "
        """)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.contains("lighthouse ['name', 'thumbnail', 'visitors', 'where']"))
        #expect(r.stdout.split(separator: "\n").count == 4)
    }

    @Test func tarOfOneMountRestoresIntoAnother() throws {
        let a = try MountFixture()
        let b = try MountFixture(demo: false)
        let tar = a.root + "/backup.tar"
        let c = MountFixture.container
        #expect(a.sh("tar -C M/\(c) -cf '\(tar)' .").status == 0)
        let x = b.sh("tar -C M/\(c) -xf '\(tar)'")
        #expect(x.status == 0, "\(x.stderr) \(b.mountLog)")
        for scope in [DatabaseScope.public, .private] {
            let from = try a.database(scope), to = try b.database(scope)
            for zone in try from.zones().map(\.zoneID.zoneName) {
                for r in try from.allRecords(in: zone) {
                    let copy = try to.record(for: RecordID(recordName: r.recordID.recordName, zoneID: to.zoneID(zone)))
                    #expect(copy.recordType == r.recordType)
                    #expect(copy.fields == r.fields, "\(zone)/\(r.recordID.recordName)")
                }
                #expect(try to.allRecords(in: zone).count == from.allRecords(in: zone).count)
            }
        }
    }

    @Test func killingTheDaemonLosesNoSavedRecord() throws {
        let m = try MountFixture()
        let dir = m.mount + "/\(MountFixture.container)/public/_defaultZone/Note"
        // A writer saves records through the mount and notes each acknowledged close.
        let acks = m.root + "/acks"
        let writer = try Spawned("/usr/bin/python3", ["-c", """
        import sys
        acks = open('\(acks)', 'w')
        i = 0
        while True:
            try:
                with open('\(dir)/k%d.json' % (i % 50), 'w') as f:
                    f.write('{"fields": {"n": {"value": %d}}}' % i)
            except OSError:
                break
            acks.write('%d\\n' % i); acks.flush()
            i += 1
        """], stdout: .inherit, stderr: .inherit)
        var waited = 0
        while (m.read(acks)?.split(separator: "\n").count ?? 0) < 30 && waited < 400 {
            usleep(25_000)
            waited += 1
        }
        #expect(kill(m.pid, SIGKILL) == 0)
        writer.wait()
        let acknowledged = (m.read(acks) ?? "").split(separator: "\n").compactMap { Int($0) }
        #expect(acknowledged.count >= 30)
        let down = m.cli(["unmount", m.mount])
        #expect(down.status == 0, "\(down.stderr)")
        // Every acknowledged save is in the store: for each name, the last acknowledged value
        // or a later one (one in flight when the daemon died may have been saved too).
        let pub = try m.database(.public)
        var last: [Int: Int] = [:]
        for i in acknowledged { last[i % 50] = i }
        for (k, i) in last {
            let r = try pub.record(for: RecordID(recordName: "k\(k)", zoneID: pub.zoneID("_defaultZone")))
            guard case .int64(let n)? = r["n"] else { Issue.record("k\(k) has no n"); continue }
            #expect(n >= Int64(i) && Int64(n) % 50 == Int64(k), "k\(k): \(n) < acknowledged \(i)")
        }
        #expect(m.cli(["fsck"]).status == 0)
        try m.start()
        #expect(m.read(dir + "/k0.json")?.contains("\"n\"") == true)
    }
}
