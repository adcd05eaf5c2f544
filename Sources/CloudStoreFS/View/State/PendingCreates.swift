import Synchronization

/// Files created and not yet saved as items, each with the open handle that created it.
///
/// A target has at most one pending handle: claiming one is a single step, which the first
/// creator wins, and a handle releases only its own claim, so the release of an earlier handle
/// never drops a later create of the same name. In the daemon's lock order this lock comes
/// after ``ZoneGenerations``'s and before the scratch space's; nothing else is called while it
/// is held.
final class PendingCreates: Sendable {
    private let byTarget = Mutex<[ItemTarget: OpenFile]>([:])

    func handle(for target: ItemTarget) -> OpenFile? {
        byTarget.withLock { $0[target] }
    }

    func contains(_ target: ItemTarget) -> Bool {
        byTarget.withLock { $0[target] != nil }
    }

    /// Makes `handle` the target's creator; false when another handle is already.
    func claim(_ target: ItemTarget, by handle: OpenFile) -> Bool {
        byTarget.withLock { byTarget in
            guard byTarget[target] == nil else { return false }
            byTarget[target] = handle
            return true
        }
    }

    /// Drops the target's claim if `handle` holds it.
    func release(_ target: ItemTarget, by handle: OpenFile) {
        byTarget.withLock { byTarget in
            if byTarget[target] === handle { byTarget[target] = nil }
        }
    }

    /// Drops the target's claim, whoever holds it, and returns its handle.
    func take(_ target: ItemTarget) -> OpenFile? {
        byTarget.withLock { $0.removeValue(forKey: target) }
    }

    /// The pending targets `isIncluded` picks.
    func targets(where isIncluded: (ItemTarget) -> Bool) -> [ItemTarget] {
        byTarget.withLock { $0.keys.filter(isIncluded) }
    }

    /// Whether a file is pending in `folder`.
    func hasTarget(in folder: NodeKey) -> Bool {
        byTarget.withLock { $0.keys.contains { $0.folder == folder } }
    }
}
