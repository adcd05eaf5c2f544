/// The parts of a notification's alert beyond its body and title, as Apple's
/// `CKSubscription.NotificationInfo` has them: localization keys and their arguments, a
/// subtitle, the action button's key, the launch image, mutable content and the field whose
/// value collapses notifications. Kept with the subscription and in each notification, and
/// sent in the payload under APNs' names.
public struct NotificationPresentation: Sendable, Equatable {
    public var alertLocalizationKey: String?
    public var alertLocalizationArgs: [String]?
    public var titleLocalizationKey: String?
    public var titleLocalizationArgs: [String]?
    public var subtitle: String?
    public var subtitleLocalizationKey: String?
    public var subtitleLocalizationArgs: [String]?
    public var alertActionLocalizationKey: String?
    public var alertLaunchImage: String?
    public var shouldSendMutableContent = false
    /// The record field whose value is the notification's collapse ID (kept; no device here
    /// collapses notifications).
    public var collapseIDKey: String?

    public init() {}

    /// Text parts by their names in the store's files, and the `aps.alert` key of each that a
    /// payload carries.
    static let texts: [(name: String, apns: String?, path: WritableKeyPath<NotificationPresentation, String?> & Sendable)] = [
        ("alertLocalizationKey", "loc-key", \.alertLocalizationKey),
        ("titleLocalizationKey", "title-loc-key", \.titleLocalizationKey),
        ("subtitle", "subtitle", \.subtitle),
        ("subtitleLocalizationKey", "subtitle-loc-key", \.subtitleLocalizationKey),
        ("alertActionLocalizationKey", "action-loc-key", \.alertActionLocalizationKey),
        ("alertLaunchImage", "launch-image", \.alertLaunchImage),
        ("collapseIDKey", nil, \.collapseIDKey),
    ]
    /// Argument lists, likewise.
    static let lists: [(name: String, apns: String, path: WritableKeyPath<NotificationPresentation, [String]?> & Sendable)] = [
        ("alertLocalizationArgs", "loc-args", \.alertLocalizationArgs),
        ("titleLocalizationArgs", "title-loc-args", \.titleLocalizationArgs),
        ("subtitleLocalizationArgs", "subtitle-loc-args", \.subtitleLocalizationArgs),
    ]

    /// Adds the parts that are set to a JSON object, by their names in the store's files.
    public func write(into out: inout [String: JSONValue]) {
        for t in Self.texts { if let v = self[keyPath: t.path] { out[t.name] = .string(v) } }
        for l in Self.lists { if let v = self[keyPath: l.path] { out[l.name] = .array(v.map { .string($0) }) } }
        if shouldSendMutableContent { out["shouldSendMutableContent"] = .bool(true) }
    }

    /// The parts a JSON object holds, by their names in the store's files.
    public init(json: JSONValue?) {
        for t in Self.texts { self[keyPath: t.path] = json?[t.name]?.stringValue }
        for l in Self.lists { self[keyPath: l.path] = json?[l.name]?.arrayValue?.compactMap(\.stringValue) }
        shouldSendMutableContent = json?["shouldSendMutableContent"]?.boolValue ?? false
    }

    /// Adds the parts a payload carries to its `aps.alert` and `aps`.
    func writeAPNS(alert: inout [String: JSONValue], aps: inout [String: JSONValue]) {
        for t in Self.texts { if let key = t.apns, let v = self[keyPath: t.path] { alert[key] = .string(v) } }
        for l in Self.lists { if let v = self[keyPath: l.path] { alert[l.apns] = .array(v.map { .string($0) }) } }
        if shouldSendMutableContent { aps["mutable-content"] = .int(1) }
    }

    /// The parts a payload's `aps` carries.
    init(aps: JSONValue?) {
        let alert = aps?["alert"]
        for t in Self.texts { if let key = t.apns { self[keyPath: t.path] = alert?[key]?.stringValue } }
        for l in Self.lists { self[keyPath: l.path] = alert?[l.apns]?.arrayValue?.compactMap(\.stringValue) }
        shouldSendMutableContent = aps?["mutable-content"]?.int64Value == 1
    }
}
