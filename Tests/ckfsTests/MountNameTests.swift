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
}
