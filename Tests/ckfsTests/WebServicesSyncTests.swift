import Foundation
import Testing
import TestSupport

/// Zones and sync tokens over `ckfs serve`, and the same store through the CLI and a mount
/// at the same time (`Tests/http/test_sync.py`).
@Suite struct WebServicesSyncTests {
    func run(_ test: String, mounted: Bool = false) throws {
        try ServeFixture.expectPasses("test_sync.py", test, mounted: mounted)
    }

    @Test func zones() throws { try run("test_zones") }
    @Test func syncLoop() throws { try run("test_sync_loop") }
    @Test func firstFetchPaged() throws { try run("test_first_fetch_paged") }
    @Test func otherInterfaces() throws { try run("test_other_interfaces", mounted: true) }
}
