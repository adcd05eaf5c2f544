import CloudStore
import Crypto
import Foundation

extension Container {
    /// Push tokens a container keeps: the oldest go first.
    static let maxPushTokens = 10_000
    static let maxUnregisteredPushTokens = 1_000

    /// Makes a push token for a web client (`tokens/create`); it delivers nothing until a
    /// user registers it.
    public func createPushToken(apnsEnvironment: String, environment: Environment) throws(CKError) -> String {
        guard apnsEnvironment == "development" || apnsEnvironment == "production" else {
            throw .invalid("\"apnsEnvironment\" must be development or production")
        }
        let token = Self.randomHex(bytes: 32)
        let now = Store.now()
        try updateWebCredentials { (web: inout WebCredentials) throws(CKError) in
            // An API token alone makes these (it may sit in a public web page): tokens never
            // registered go after an hour, and the file keeps at most so many of them.
            var tokens = web.pushTokens.filter { $0.userName != nil || $0.created > now - 3_600_000 }
            let unregistered = tokens.filter { $0.userName == nil }
            if unregistered.count >= Self.maxUnregisteredPushTokens, let oldest = unregistered.min(by: { $0.created < $1.created }) {
                tokens.removeAll { $0.token == oldest.token }
            }
            if tokens.count >= Self.maxPushTokens, let oldest = tokens.min(by: { $0.created < $1.created }) {
                tokens.removeAll { $0.token == oldest.token }
            }
            tokens.append(.init(token: token, apnsEnvironment: apnsEnvironment, environment: environment, created: now))
            web.pushTokens = tokens
        }
        return token
    }

    /// Registers a push token for the identity `caller` acts as (`tokens/register`): from now
    /// on, the notifications of that identity after this moment, but for those of the
    /// caller's own changes.
    public func registerPushToken(_ token: String, caller: Caller) throws(CKError) {
        let identity = try signedIn(caller, for: "register for notifications")
        try updateWebCredentials { (web: inout WebCredentials) throws(CKError) in
            guard let i = web.pushTokens.firstIndex(where: { $0.token == token }) else {
                throw CKError(.unknownItem, "push token \(token) was not made here; make one with tokens/create first")
            }
            let environment = web.pushTokens[i].environment
            let position = try notificationLog(userRecordName: identity.userRecordName, environment: environment).changes().token
            web.pushTokens[i].userName = identity.name
            web.pushTokens[i].deviceID = caller.deviceID
            web.pushTokens[i].position = position.text
        }
    }

    /// Whether `token` was made by ``createPushToken(apnsEnvironment:environment:)`` and not
    /// dropped since, registered or not.
    public func isPushToken(_ token: String) throws(CKError) -> Bool {
        try webCredentials().pushTokens.contains { $0.token == token }
    }

    /// Where a registered push token delivers from; nil when the token is unknown or not registered.
    public func pushRegistration(_ token: String) throws(CKError) -> PushRegistration? {
        guard let t = try webCredentials().pushTokens.first(where: { $0.token == token }), let user = t.userName else { return nil }
        return PushRegistration(userName: user, deviceID: t.deviceID, environment: t.environment,
                                position: t.position.map(NotificationToken.init(text:)))
    }

    /// Notes that a push token's notifications were delivered up to `position`.
    public func advancePushToken(_ token: String, to position: NotificationToken) throws(CKError) {
        try updateWebCredentials { (web: inout WebCredentials) throws(CKError) in
            guard let i = web.pushTokens.firstIndex(where: { $0.token == token }) else { return }
            web.pushTokens[i].position = position.text
        }
    }
}
