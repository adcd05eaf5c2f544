import Foundation
import Testing
import TestSupport

/// A mount daemon keeps the schema it read; another process's change to it is seen at the
/// next save through the mount, which is never refused on the copy the daemon held.
@Suite struct SchemaElsewhereMountTests {
    @Test func aFieldAddedByTheCLIFitsTheNextEditThroughTheMount() throws {
        let m = try MountFixture(demo: false)
        let folder = m.mount + "/\(MountFixture.container)/private/_defaultZone/Thing"
        var r = m.sh("mkdir '\(folder)' && echo '{\"fields\":{\"n\":1}}' > '\(folder)/t1.json'")
        #expect(r.status == 0, "\(r.stderr)")
        // Another process adds a DOUBLE field.
        r = m.cli(["record", "save"], input: #"{"recordType":"Thing","recordName":"t2","fields":{"ratio":{"value":2.5,"type":"DOUBLE"}}}"#)
        #expect(r.status == 0, "\(r.stderr)")
        // An untyped integer for it, through the mount, is that DOUBLE at the first try.
        r = m.sh("cp /dev/stdin '\(folder)/t3.json' <<'EOF'\n{\"fields\":{\"ratio\":3}}\nEOF")
        #expect(r.status == 0, "\(r.stderr)\n\(m.mountLog.suffix(1000))")
        let saved = m.cli(["record", "fetch", "t3"])
        #expect(saved.json?["fields"]?["ratio"]?["type"]?.stringValue == "DOUBLE", "\(saved.stdout) \(saved.stderr)")
    }
}
