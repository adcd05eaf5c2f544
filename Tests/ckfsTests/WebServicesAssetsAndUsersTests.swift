import Foundation
import Testing

/// Assets both ways over `ckfs serve` (upload, receipt, download, rereference) and user
/// discovery (`Tests/http/test_assets_users.py`).
@Suite struct WebServicesAssetsAndUsersTests {
    func run(_ test: String) throws {
        let fixture = try ServeFixture()
        let out = fixture.python("test_assets_users.py", [test])
        #expect(out.status == 0, "\(out.stdout)\(out.stderr)\nserver log:\n\(fixture.serverLog.suffix(3000))")
        #expect(out.stdout.contains("\(test): passed"))
    }

    @Test func assets() throws { try run("test_assets") }
    @Test func users() throws { try run("test_users") }
}
