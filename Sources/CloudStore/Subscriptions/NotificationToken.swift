/// Where to go on from in a user's notifications: opaque to callers.
public struct NotificationToken: Sendable, Equatable, CustomStringConvertible {
    public let text: String
    public init(text: String) { self.text = text }
    public var description: String { text }

    init(epoch: String, seq: Int64) { text = "\(epoch)-\(seq)" }

    var parts: (epoch: String, seq: Int64)? {
        guard let dash = text.lastIndex(of: "-"), let seq = Int64(text[text.index(after: dash)...]), seq >= 0 else { return nil }
        return (String(text[..<dash]), seq)
    }
}
