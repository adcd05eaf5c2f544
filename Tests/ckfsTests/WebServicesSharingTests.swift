import Foundation
import Testing
import TestSupport

/// The shared database and share resolution over `ckfs serve`, with three users
/// (`Tests/http/test_sharing.py`).
@Suite struct WebServicesSharingTests {
    @Test func sharedDatabase() throws { try ServeFixture.expectPasses("test_sharing.py", "test_shared_database") }
}
