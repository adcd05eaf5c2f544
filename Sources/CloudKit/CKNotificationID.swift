import Foundation
import CloudStore

/// A notification's ID, `CKNotification.ID`: an `NSObject` with `NSSecureCoding` and
/// `NSCopying`, as Apple's (`CKNotificationID` in Objective-C), so code can keep the IDs it has
/// handled in an archive. Two IDs of one notification are equal and hash alike. (A top-level
/// class: Linux Foundation's archiver names only those.)
///
/// `@unchecked Sendable`: immutable; its stored property is a `let`.
public final class CKNotificationID: NSObject, NSSecureCoding, NSCopying, @unchecked Sendable {
    /// The notification's name in the store's notification log.
    public let rawValue: String

    public init(_ rawValue: String) {
        self.rawValue = rawValue
        super.init()
    }

    public static var supportsSecureCoding: Bool { true }

    public func encode(with coder: NSCoder) {
        coder.encode(rawValue as NSString, forKey: "notificationID")
    }

    public init?(coder: NSCoder) {
        guard let raw = coder.decodeObject(of: NSString.self, forKey: "notificationID") as String? else { return nil }
        rawValue = raw
        super.init()
    }

    public func copy(with zone: NSZone? = nil) -> Any { self }

    public override func isEqual(_ object: Any?) -> Bool {
        (object as? CKNotificationID)?.rawValue == rawValue
    }

    public override var hash: Int { rawValue.hashValue }

    public override var description: String { rawValue }
}
