/// One user's notifications as a backend keeps them: appended durably as commits fire the
/// user's subscriptions, read after a token, marked read. A token names a place in one
/// history of them; a token of another history (the notifications were deleted and started
/// again) is `changeTokenExpired`.
package protocol NotificationStorage: Sendable {
    /// Appends notifications durably; they are kept when this returns.
    func append(_ notifications: [CloudNotification]) throws(CKError)

    /// Marks notifications read. IDs that are not kept are ignored.
    func markRead(_ ids: [String]) throws(CKError)

    /// Changes whenever what is kept does, and is cheap to ask: followers poll it.
    func version() throws(CKError) -> String

    /// The notifications after `token` (nil: all kept), but those `device` caused itself, the
    /// token to go on from, and the badge.
    func changes(since token: NotificationToken?, excludingDevice device: String?) throws(CKError) -> NotificationChanges

    /// Everything kept, for a copy to another store: the history's name and every entry in
    /// order with its sequence number, so tokens given before the copy stay good after it.
    /// Nil when nothing is kept.
    func snapshot() throws(CKError) -> NotificationSnapshot?

    /// Keeps `snapshot` as the user's notifications, where none are kept yet
    /// (`invalidArguments` otherwise).
    func restore(_ snapshot: NotificationSnapshot) throws(CKError)
}

/// A user's notifications as ``NotificationStorage/snapshot()`` gives them.
package struct NotificationSnapshot: Sendable {
    /// What a read mark or a notification is, with the sequence number it was kept under.
    package enum Entry: Sendable {
        case notification(seq: Int64, CloudNotification)
        case markRead(seq: Int64, ids: [String], time: Int64)
    }

    /// The name of the history, part of every token.
    package var epoch: String
    package var entries: [Entry]

    package init(epoch: String, entries: [Entry]) {
        self.epoch = epoch
        self.entries = entries
    }
}

extension NotificationStorage {
    /// Every notification kept.
    package func changes() throws(CKError) -> NotificationChanges {
        try changes(since: nil, excludingDevice: nil)
    }

    /// The notifications after `token`, whoever caused them.
    package func changes(since token: NotificationToken?) throws(CKError) -> NotificationChanges {
        try changes(since: token, excludingDevice: nil)
    }

    /// A follower starting after `token` (nil: with every notification kept).
    package func follow(since token: NotificationToken? = nil, excludingDevice device: String? = nil) -> NotificationFollower {
        NotificationFollower(storage: self, token: token, device: device)
    }
}

/// Reads new notifications as they come: each ``poll()`` gives those after the last it gave,
/// reading them only when their version changed.
package struct NotificationFollower: Sendable {
    let storage: any NotificationStorage
    let device: String?
    package private(set) var token: NotificationToken?
    private var seen = ""

    init(storage: any NotificationStorage, token: NotificationToken?, device: String?) {
        self.storage = storage
        self.token = token
        self.device = device
    }

    package mutating func poll() throws(CKError) -> [CloudNotification] {
        let version = try storage.version()
        guard version != seen else { return [] }
        seen = version
        let changes = try storage.changes(since: token, excludingDevice: device)
        token = changes.token
        return changes.notifications
    }
}
