import Foundation
import Testing
import TestSupport

/// Assets both ways over `ckfs serve` (upload, receipt, download, rereference) and user
/// discovery (`Tests/http/test_assets_users.py`).
@Suite struct WebServicesAssetsAndUsersTests {
    func run(_ test: String) throws { try ServeFixture.expectPasses("test_assets_users.py", test) }

    @Test func assets() throws { try run("test_assets") }
    @Test func users() throws { try run("test_users") }

    /// Under a 3 MB quota, with uploads lasting 2 s: what refused saves and unused uploads leave.
    @Test func assetQuotaAndUploads() throws {
        let staging = NSTemporaryDirectory() + "ckfs-staging-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: staging, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: staging) }
        let fixture = try ServeFixture(serveArgs: ["--upload-lifetime", "2"], temporaryDirectory: staging,
                                       initArgs: ["--private-quota", "3000000"])
        let out = fixture.python("test_assets_users.py", ["test_asset_quota_and_uploads"], extra: ["CKFS_STAGING": staging])
        #expect(out.status == 0 && out.stdout.contains("test_asset_quota_and_uploads: passed"),
                "\(out.stdout)\(out.stderr)\nserver log:\n\(fixture.serverLog.suffix(3000))")
    }
}
