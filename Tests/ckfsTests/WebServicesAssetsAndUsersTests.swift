import Foundation
import Testing

/// Assets both ways over `ckfs serve` (upload, receipt, download, rereference) and user
/// discovery (`Tests/http/test_assets_users.py`).
@Suite struct WebServicesAssetsAndUsersTests {
    func run(_ test: String) throws { try ServeFixture.expectPasses("test_assets_users.py", test) }

    @Test func assets() throws { try run("test_assets") }
    @Test func users() throws { try run("test_users") }
}
