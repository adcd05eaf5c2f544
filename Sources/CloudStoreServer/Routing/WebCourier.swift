import CloudStore
import CloudStoreServerCore
import Hummingbird

/// The web courier: `GET /webcourier/<container>/<push token>` waits until the registered
/// user has a notification (from any client: the CLI, a mount, the Swift API, HTTP), answers
/// it with one notification's payload, and the client polls again. An idle poll ends with 204
/// after the configured time; so does one of a token made but not registered yet, which is
/// delivered to as soon as it is. The URL is the capability; it needs no other credentials.
///
/// A token that is not there (never made, or dropped) is answered after
/// ``unknownTokenDelay``, with a 404 whose body is plain text, not JSON: CloudKit JS hands
/// any JSON answer to the app as a notification and polls again 10 ms later, while a body
/// that is no JSON makes it back off; the delay bounds any client to about one such poll a
/// second.
struct WebCourier: Sendable {
    let store: Store
    let configuration: WebServerConfiguration

    static let unknownTokenDelay: Duration = .seconds(1)

    /// What the poll's token is: registered (delivered to), made but not registered, or none.
    private enum Found: Sendable {
        case registered(Container, PushRegistration)
        case pending
        case unknown
    }

    func respond(_ request: Request, _ context: WebRequestContext) async -> Response {
        let containerID = context.parameters.get("container") ?? ""
        let token = context.parameters.get("token") ?? ""
        let store = self.store
        do throws(CKError) {
            let configuration = self.configuration
            let deadline = ContinuousClock.now + .milliseconds(Int(configuration.longPollSeconds * 1000))
            let look = { () async throws(CKError) -> Found in
                try await WebAPI.blocking { () throws(CKError) -> Found in
                    guard configuration.containers?.contains(containerID) ?? true, try store.containerIdentifiers().contains(containerID),
                          let container = try? store.container(containerID) else { return .unknown }
                    if let registration = try container.pushRegistration(token) { return .registered(container, registration) }
                    return try container.isPushToken(token) ? .pending : .unknown
                }
            }
            var found = try await look()
            while case .pending = found, ContinuousClock.now < deadline, !Task.isCancelled {
                try? await Task.sleep(for: .milliseconds(250))
                found = try await look()
            }
            let container: Container, registration: PushRegistration
            switch found {
            case .registered(let c, let r): (container, registration) = (c, r)
            case .pending: return Response(status: .noContent)
            case .unknown:
                try? await Task.sleep(for: Self.unknownTokenDelay)
                let text = "no push token \(token) in container \(containerID): make one with tokens/create (signed in, or register it with tokens/register)\n"
                return Response(status: .notFound, headers: [.contentType: "text/plain; charset=utf-8"], body: .init(byteBuffer: ByteBuffer(string: text)))
            }
            let log = try container.notificationLog(user: registration.userName, environment: registration.environment)
            var follower = log.follow(since: registration.position, excludingDevice: registration.deviceID)
            while ContinuousClock.now < deadline, !Task.isCancelled {
                let polled = try await WebAPI.blocking { [follower] () throws(CKError) -> (NotificationFollower, [CloudNotification]) in
                    var f = follower
                    do throws(CKError) {
                        return (f, try f.poll())
                    } catch where error.code == .changeTokenExpired {
                        // The log was started again since the last delivery: all it holds is new.
                        f = log.follow(since: nil, excludingDevice: registration.deviceID)
                        return (f, try f.poll())
                    }
                }
                follower = polled.0
                if let first = polled.1.first {
                    if let position = first.token {
                        try await WebAPI.blocking { () throws(CKError) in try container.advancePushToken(token, to: position) }
                    }
                    return WebAPI.json(first.apnsPayload(container: containerID), status: .ok)
                }
                try? await Task.sleep(for: .milliseconds(100))
            }
            return Response(status: .noContent)
        } catch {
            return WebAPI.json(error.webServicesDictionary(), status: error.webServicesCode.status)
        }
    }
}
