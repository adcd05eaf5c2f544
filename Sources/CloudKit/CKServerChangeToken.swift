import Foundation
import CloudStore

/// A point in a zone's, a database's or the notifications' history, as CloudKit's: opaque, compared with
/// `==`, and archived with `NSKeyedArchiver` (it is `NSSecureCoding`) to hand back to the next
/// fetch after the app restarts.
///
/// `@unchecked Sendable`: immutable; its one stored property is a `let`.
public final class CKServerChangeToken: NSObject, NSSecureCoding, NSCopying, @unchecked Sendable {
    /// `zone <epoch>-<seq>`, `database <base64url>` or `notifications <epoch>-<seq>`: the
    /// engine's token, with its kind.
    let text: String

    init(zone token: ChangeToken) { text = "zone " + token.description }
    init(database token: DatabaseChangeToken) { text = "database " + token.description }
    init(notifications token: NotificationToken) { text = "notifications " + token.text }
    /// A token as `text` wrote it (kept in a sync engine's state).
    init(text: String) { self.text = text }

    /// The zone token this stands for; nil for a database token.
    var zoneToken: ChangeToken? {
        text.hasPrefix("zone ") ? ChangeToken(string: String(text.dropFirst(5))) : nil
    }

    /// The notifications token this stands for; nil for a zone or database token.
    var notificationToken: NotificationToken? {
        text.hasPrefix("notifications ") ? NotificationToken(text: String(text.dropFirst(14))) : nil
    }

    /// The database token this stands for; nil for a zone token.
    var databaseToken: DatabaseChangeToken? {
        text.hasPrefix("database ") ? DatabaseChangeToken(string: String(text.dropFirst(9))) : nil
    }

    public static var supportsSecureCoding: Bool { true }

    public func encode(with coder: NSCoder) { coder.encode(text as NSString, forKey: "token") }

    public init?(coder: NSCoder) {
        guard let text = coder.decodeObject(of: NSString.self, forKey: "token") as String? else { return nil }
        self.text = text
    }

    public func copy(with zone: NSZone? = nil) -> Any { self }

    public override func isEqual(_ object: Any?) -> Bool { (object as? CKServerChangeToken)?.text == text }
    public override var hash: Int { text.hashValue }
    public override var description: String { "<CKServerChangeToken \(text)>" }
}
