import CloudStore

/// A registered push token: whose notifications it delivers, and from where.
public struct PushRegistration: Sendable, Equatable {
    public var userName: String
    public var deviceID: String?
    public var environment: Environment
    public var position: NotificationToken?
}
