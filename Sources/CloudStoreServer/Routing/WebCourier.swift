import CloudStore
import Hummingbird

/// The web courier: `GET /webcourier/<container>/<push token>` waits until the registered
/// user has a notification (from any client: the CLI, a mount, the Swift API, HTTP), answers
/// it with one notification's payload, and the client polls again. An idle poll ends with 204
/// after the configured time. The URL is the capability; it needs no other credentials.
struct WebCourier: Sendable {
    let store: Store
    let configuration: WebServerConfiguration

    func respond(_ request: Request, _ context: WebRequestContext) async -> Response {
        let containerID = context.parameters.get("container") ?? ""
        let token = context.parameters.get("token") ?? ""
        let store = self.store
        do throws(CKError) {
            let configuration = self.configuration
            let (container, registration) = try await WebAPI.blocking { () throws(CKError) -> (Container, PushRegistration) in
                guard configuration.containers?.contains(containerID) ?? true, try store.containerIdentifiers().contains(containerID),
                      let container = try? store.container(containerID),
                      let registration = try container.pushRegistration(token) else {
                    throw CKError(.unknownItem, "no registered push token \(token) in container \(containerID); make one with tokens/create and register it with tokens/register")
                }
                return (container, registration)
            }
            let log = try container.notificationLog(user: registration.userName, environment: registration.environment)
            var follower = log.follow(since: registration.position, excludingDevice: registration.deviceID)
            let deadline = ContinuousClock.now + .milliseconds(Int(configuration.longPollSeconds * 1000))
            while ContinuousClock.now < deadline, !Task.isCancelled {
                let polled = try await WebAPI.blocking { [follower] () throws(CKError) -> (NotificationLog.Follower, [CloudNotification]) in
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
