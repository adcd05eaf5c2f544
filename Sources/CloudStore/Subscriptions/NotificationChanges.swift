/// Notifications since a token, and the token to go on from.
public struct NotificationChanges: Sendable {
    public var notifications: [CloudNotification]
    public var token: NotificationToken
    /// Unread notifications that ask for a badge, over the whole log: the app's badge number.
    public var badge: Int
}
