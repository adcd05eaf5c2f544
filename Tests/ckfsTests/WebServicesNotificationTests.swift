import Foundation
import Testing
import TestSupport

/// Subscriptions over `ckfs serve`, and the web courier's long poll woken by saves made
/// through the mount and the CLI (`Tests/http/test_notifications.py`).
@Suite struct WebServicesNotificationTests {
    func run(_ test: String, mounted: Bool = false) throws {
        try ServeFixture.expectPasses("test_notifications.py", test, serveArgs: ["--long-poll-seconds", "3"], mounted: mounted)
    }

    @Test func subscriptions() throws { try run("test_subscriptions") }
    @Test func longPollWokenByTheMount() throws { try run("test_long_poll_woken_by_the_mount", mounted: true) }
    @Test func zoneNotifications() throws { try run("test_zone_notifications") }
    @Test func createdTokenIsPolledAtOnce() throws { try run("test_created_token_is_polled_at_once") }
}
