import Foundation
import Testing
import TestSupport

/// Every name the mount takes in a record type folder or in `keyvalue/` is an item, a scratch
/// file (a leading dot, or another extension), or refused when the file is made: a file never
/// lives in memory only under a name that looks like an item.
@Suite struct MountNameTests {
    @Test func namesThatCannotBeItemsAreRefusedWhenTheFileIsMade() throws {
        let m = try MountFixture()
        let c = MountFixture.container
        let r = m.sh(#"""
        python3 - <<'PY'
        import errno, os
        d = 'M/\#(c)/private/Notes/Note'
        kv = 'M/\#(c)/keyvalue'
        def make(path):
            try:
                with open(path, 'w') as f: f.write('{"fields": {"text": "x"}}')
                return 'made'
            except OSError as e:
                return errno.errorcode[e.errno]
        def move(a, b):
            make(a)
            try:
                os.rename(a, b)
                return 'moved'
            except OSError as e:
                return errno.errorcode[e.errno]
        print(make(d + '/a\nb.json'), make(d + '/tab\there.json'), make(d + '/100%.json'),
              make(d + '/a%0Ab.json'), make(kv + '/k\x01.plist'), move(d + '/.tmp1', d + '/c\td.json'),
              make(d + '/.scratch.json'), make(d + '/notes.json.swp'), make(d + '/fine.json'))
        print(sorted(n for n in os.listdir(d) if n.endswith('.json')))
        PY
        """#)
        #expect(r.status == 0, "\(r.stderr)")
        let lines = r.stdout.split(separator: "\n").map(String.init)
        #expect(lines.first == "EINVAL EINVAL EINVAL EINVAL EINVAL EINVAL made made made", "\(r.stdout)")
        // Only real records and the scratch file show; nothing under a refused name.
        #expect(lines.last == "['.scratch.json', 'fine.json', 'groceries.json']", "\(r.stdout)")
        #expect(m.mountLog.contains("control characters"), "\(m.mountLog.suffix(800))")
        // After a remount the saved record is still there and nothing else appeared.
        #expect(m.cli(["unmount", m.mount]).status == 0)
        try m.start()
        let after = m.sh("ls M/\(c)/private/Notes/Note")
        #expect(after.stdout == "fine.json\ngroceries.json\n", "\(after.stdout)")
    }

    /// Record names up to CloudKit's 255 characters are kept, also those whose file name would
    /// pass 255 bytes (a long name's file has a hash in its name), from the CLI and through the mount.
    @Test func recordNamesUpToCloudKitsLimitAreKept() throws {
        let m = try MountFixture()
        func save(_ name: String, _ text: String) -> CLIFixture.Output {
            m.cli(["record", "save", "--policy", "allKeys"], input: #"{"recordType":"Note","recordName":"\#(name)","fields":{"text":"\#(text)"}}"#)
        }
        let longest = String(repeating: "n", count: 255), escaped = String(repeating: "%", count: 255), fits = String(repeating: "f", count: 250)
        for name in [longest, escaped, fits] {
            #expect(save(name, "first").status == 0)
            // Saved again: a rewrite goes through a temporary file beside the record's.
            let again = save(name, "second")
            #expect(again.status == 0, "\(again.stderr.suffix(300))")
            #expect(m.cli(["record", "fetch", name]).stdout.contains("second"), "\(name.prefix(3))")
        }
        #expect(save(String(repeating: "n", count: 256), "x").stderr.contains("the limit is 255"))
        // Through the mount: each shows under its file name, reads as itself, edits and goes.
        let dir = "M/\(MountFixture.container)/private/_defaultZone/Note"
        let r = m.sh(#"""
        python3 - '\#(dir)' <<'PY'
        import json, os, subprocess, sys
        d = sys.argv[1]
        names = sorted(os.listdir(d))
        print(len(names), max(len(n.encode()) for n in names))
        for n in names:
            r = json.load(open(os.path.join(d, n)))
            assert r['fields']['text']['value'] == 'second', (n, r)
        long = [n for n in names if n.startswith('nnnn')][0]
        subprocess.run(['sed', '-i', 's/second/third/', os.path.join(d, long)], check=True)
        print(json.load(open(os.path.join(d, long)))['recordName'] == 'n' * 255)
        with open(os.path.join(d, long), 'w') as f: f.write('{"fields": {"text": "fourth"}}')
        os.remove(os.path.join(d, [n for n in names if n.startswith('%25')][0]))
        print(sorted(os.listdir(d)) == sorted(set(names) - {[n for n in names if n.startswith('%25')][0]}))
        PY
        """#)
        #expect(r.status == 0, "\(r.stderr) \(m.mountLog.suffix(500))")
        #expect(r.stdout == "3 255\nTrue\nTrue\n", "\(r.stdout)")
        #expect(m.cli(["record", "fetch", longest]).stdout.contains("fourth"))
        #expect(m.cli(["record", "fetch", escaped]).status != 0)
        let check = m.cli(["fsck"])
        #expect(check.status == 0 && check.stdout.contains("0 damaged"), "\(check.stdout) \(check.stderr)")
        // A 250-byte name is a 255-byte file name, the longest the mount takes for a new file.
        let made = m.sh("echo '{\"fields\":{\"text\":\"m\"}}' > \(dir)/\(String(repeating: "m", count: 250)).json")
        #expect(made.status == 0, "\(made.stderr)")
        #expect(m.cli(["record", "fetch", String(repeating: "m", count: 250)]).status == 0)
    }
}
