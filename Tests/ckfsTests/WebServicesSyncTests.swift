import Foundation
import Testing

/// Zones and sync tokens over `ckfs serve`, and the same store through the CLI and a mount
/// at the same time (`Tests/http/test_sync.py`).
@Suite struct WebServicesSyncTests {
    func run(_ test: String, mounted: Bool = false) throws {
        let fixture = try ServeFixture(mounted: mounted)
        let out = fixture.python("test_sync.py", [test])
        #expect(out.status == 0, "\(out.stdout)\(out.stderr)\nserver log:\n\(fixture.serverLog.suffix(3000))")
        #expect(out.stdout.contains("\(test): passed"))
    }

    @Test func zones() throws { try run("test_zones") }
    @Test func syncLoop() throws { try run("test_sync_loop") }
    @Test func otherInterfaces() throws { try run("test_other_interfaces", mounted: true) }
}
