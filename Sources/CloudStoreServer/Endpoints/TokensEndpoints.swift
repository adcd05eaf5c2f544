import CloudStore
import CloudStoreServerCore

/// `tokens/create` and `tokens/register`: a web client's push token and the web courier URL
/// it long-polls for the signed-in user's notifications.
enum TokensEndpoints {
    /// A token made by a signed-in web client is registered for that user at once: CloudKit JS
    /// long-polls its URL straight after `tokens/create` and registers only on a later call.
    static func create(_ call: WebCall) throws(CKError) -> JSONValue {
        let apns = call.body["apnsEnvironment"]?.stringValue ?? "development"
        let token = try call.container.createPushToken(apnsEnvironment: apns, environment: call.environment)
        if call.caller.caller.hasAccount { try call.container.registerPushToken(token, caller: call.caller.caller) }
        return .object([
            "apnsEnvironment": .string(apns),
            "apnsToken": .string(token),
            "webcourierURL": .string(courierURL(call, token: token)),
        ])
    }

    static func register(_ call: WebCall) throws(CKError) -> JSONValue {
        guard let token = call.body["apnsToken"]?.stringValue else {
            throw CKError(.invalidArguments, "tokens/register needs the \"apnsToken\" tokens/create gave")
        }
        try call.container.registerPushToken(token, caller: call.caller.caller)
        let apns = call.body["apnsEnvironment"]?.stringValue ?? "development"
        return .object(["apnsEnvironment": .string(apns), "apnsToken": .string(token), "webcourierURL": .string(courierURL(call, token: token))])
    }

    /// The URL a client long-polls: it is the capability, and needs no other credentials.
    static func courierURL(_ call: WebCall, token: String) -> String {
        "\(call.baseURL)/webcourier/\(call.container.identifier)/\(token)"
    }
}
