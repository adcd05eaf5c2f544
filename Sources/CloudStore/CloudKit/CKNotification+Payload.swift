import Foundation

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
        guard let json = CKNotification.json(notificationDictionary),
              let (notification, container) = try? CloudNotification.fromAPNSPayload(json),
              let made = CKNotification.wrap(notification, containerIdentifier: container) as? Self else { return nil }
        self = made
    }
}

extension CKNotification {
    /// A property-list value from a push's `userInfo` (strings, numbers, arrays and
    /// dictionaries, as APNs and `JSONSerialization` give them) as JSON; nil for anything else.
    static func json(_ value: Any) -> JSONValue? {
        switch value {
        case let s as String: return .string(s)
        case let i as Int: return .int(Int64(i))
        case let i as Int64: return .int(i)
        case let d as Double: return .double(d)
        case let b as Bool: return .bool(b)
        case let list as [Any]: return .array(list.compactMap(json))
        case let members as [AnyHashable: Any]:
            var out: [String: JSONValue] = [:]
            for (key, member) in members {
                guard let key = key.base as? String, let value = json(member) else { continue }
                out[key] = value
            }
            return .object(out)
        default: return nil
        }
    }
}
