import Foundation
import Testing
import TestSupport

/// Who may call `ckfs serve`: API tokens, web auth tokens, and server-to-server keys whose
/// requests PyPI's requests-cloudkit signs (`Tests/http/test_auth.py`).
@Suite struct WebServicesAuthTests {
    func run(_ test: String) throws { try ServeFixture.expectPasses("test_auth.py", test) }

    @Test func tokens() throws { try run("test_tokens") }
    @Test func urls() throws { try run("test_urls") }
    @Test func serverToServerKeys() throws { try run("test_server_to_server_keys") }
}
