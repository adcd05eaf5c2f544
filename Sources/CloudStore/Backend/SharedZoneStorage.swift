/// The list of zones of a container's private databases that may hold shares, in one
/// environment (``SharedZone``): what the engine's share registry keeps, so that finding a
/// share reads those zones only. The engine decides what goes in; the backend keeps the list
/// and changes it atomically.
package protocol SharedZoneStorage: Sendable {
    /// Where the list is kept, for messages (the file backend's file).
    var location: String { get }

    /// The zones listed; nil when there is no list (never made, or not readable as one).
    func read() throws(CKError) -> [SharedZone]?

    /// Changes the list atomically: `body` gets the list as it is (nil: none) and returns the
    /// list to keep, or nil to keep it as it is; no other change to it comes in between.
    @discardableResult
    func update<T>(_ body: ([SharedZone]?) throws(CKError) -> ([SharedZone]?, T)) throws(CKError) -> T
}

/// A zone, by its owner's user record name and its name.
package struct SharedZone: Hashable, Comparable, Sendable {
    package var owner: String
    package var zone: String

    package init(owner: String, zone: String) {
        self.owner = owner
        self.zone = zone
    }

    package static func < (a: SharedZone, b: SharedZone) -> Bool { (a.owner, a.zone) < (b.owner, b.zone) }
}
