/// Tells a process when the zones and key-value stores it follows are committed to, by any
/// process, without its knowing how the backend keeps them: what the mount's change watcher
/// follows (``StoreBackend/commitFeed(of:)``). A commit is reported after it is durable and
/// before it is acknowledged, so a follower that reads the feed empty after a look has seen
/// every acknowledged commit.
///
/// Each followed thing is named by a `Target` of the caller's. ``wait(milliseconds:)`` waits
/// for reports, ``read()`` takes what is queued (it never blocks), and ``hasUnreadEvents``
/// tells whether anything is queued and not read yet.
package protocol CommitFeed<Target>: AnyObject, Sendable {
    associatedtype Target: Hashable & Sendable

    /// False when the backend cannot report commits here: then nothing is ever reported, and
    /// a follower looks for itself.
    var isAvailable: Bool { get }

    func isFollowing(_ target: Target) -> Bool

    /// Every target followed now.
    var followedTargets: Set<Target> { get }

    /// Follows commits to `zone` as `target`; false when it cannot be followed yet (the file
    /// backend's zone has no folder before it is made), so a later call tries again.
    @discardableResult
    func follow(_ target: Target, zone: any ZoneStorage) -> Bool

    /// Follows writes to a key-value store as `target`; false when it cannot be followed yet
    /// (the store is made at its first write), so a later call tries again.
    @discardableResult
    func follow(_ target: Target, keyValues storage: any KeyValueStorage) -> Bool

    /// Waits up to `milliseconds` for something to read; true when there is.
    func wait(milliseconds: Int32) -> Bool

    /// Takes every report queued now.
    func read() -> CommitFeedReport<Target>

    /// Whether reports are queued and not read yet; true when it cannot tell.
    var hasUnreadEvents: Bool { get }
}

/// What a ``CommitFeed/read()`` found.
package struct CommitFeedReport<Target: Sendable>: Sendable {
    /// Targets committed to (or which went away), in the order read.
    package var written: [Target] = []
    /// Targets no longer followed: they went away (a zone deleted), and are followed again
    /// by a new ``CommitFeed/follow(_:zone:)``.
    package var unfollowed: [Target] = []
    /// Reports were lost: every target followed may have been committed to.
    package var overflowed = false

    package init() {}
}
