import Foundation
import Testing

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

    /// Record names up to what a file name holds are kept, from the CLI and through the mount;
    /// longer ones get a clear refusal, not an internal error.
    @Test func longRecordNamesAreKeptUpToTheFileNameLimitAndRefusedPastIt() throws {
        let m = try MountFixture()
        func save(_ name: String) -> CLIFixture.Output {
            m.cli(["record", "save"], input: #"{"recordType":"Note","recordName":"\#(name)","fields":{"text":"long"}}"#)
        }
        let longest = String(repeating: "n", count: 250)
        #expect(save(longest).status == 0)
        // Saved again: a rewrite goes through a temporary file beside the record's.
        let again = m.cli(["record", "save", "--policy", "allKeys"], input: #"{"recordType":"Note","recordName":"\#(longest)","fields":{"text":"longer"}}"#)
        #expect(again.status == 0, "\(again.stderr.suffix(300))")
        #expect(m.cli(["record", "fetch", longest]).stdout.contains("longer"))
        for name in [String(repeating: "n", count: 251), String(repeating: "%", count: 84)] {
            let r = save(name)
            #expect(r.status != 0 && r.stderr.contains("at most 250 bytes") && !r.stderr.contains("internalError"), "\(r.stderr.suffix(300))")
        }
        // Through the mount: the 250-byte name is a 255-byte file name, the longest there is.
        let dir = "M/\(MountFixture.container)/private/Notes/Note"
        let made = m.sh("echo '{\"fields\":{\"text\":\"m\"}}' > \(dir)/\(String(repeating: "m", count: 250)).json && ls \(dir) | grep -c mmmm")
        #expect(made.status == 0 && made.stdout == "1\n", "\(made.stderr)")
        #expect(m.cli(["record", "fetch", String(repeating: "m", count: 250), "--zone", "Notes"]).status == 0)
    }
}
