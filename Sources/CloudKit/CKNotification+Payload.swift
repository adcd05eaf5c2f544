import Foundation
import CloudStore

/// Gives `CKNotification(fromRemoteNotificationDictionary:)` the subclass its payload names,
/// as Apple's does (a Swift initializer of a class cannot return a subclass; one declared on a
/// protocol the class adopts can).
public protocol CKNotificationFromPayload {}

extension CKNotification: CKNotificationFromPayload {}

extension CKNotificationFromPayload where Self: CKNotification {
    /// The notification a push's `userInfo` carries: a ``CKQueryNotification``,
    /// ``CKRecordZoneNotification`` or ``CKDatabaseNotification``, as the payload says; nil
    /// when the dictionary is not a CloudKit payload (or names another kind than `Self`).
    /// ckfs hands out these payloads from its web courier (`ckfs serve`) and
    /// `ckfs notifications --apns`.
    public init?(fromRemoteNotificationDictionary notificationDictionary: [AnyHashable: Any]) {
        // A push's userInfo is a property list (as APNs and JSONSerialization give it).
        guard let json = (try? PropertyListValue(foundationObject: notificationDictionary))?.jsonValue,
              let (notification, container) = try? CloudNotification.fromAPNSPayload(json),
              let made = CKNotification.wrap(notification, containerIdentifier: container) as? Self else { return nil }
        self = made
    }
}
