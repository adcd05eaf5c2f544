import CloudStore
import Synchronization

/// How many changes the view has seen in each zone, and what it keeps as of a zone's
/// generation: the generation each type folder's listing was last served at (for the kernel's
/// directory cache) and the caller's access to each shared zone.
///
/// Generations only grow: a zone's is never reset, not even when the zone goes, so a number
/// names one state of the zone's records. What is kept at a generation is used only while its
/// zone is still at that generation. In the daemon's lock order this lock comes before
/// ``PendingCreates``'s and the scratch space's, which `inFlight` takes while it is held.
final class ZoneGenerations: Sendable {
    private struct State {
        var generations: [StoreView.ZoneRef: UInt64] = [:]
        var servedListings: [NodeKey: UInt64] = [:]
        var sharedAccess: [StoreView.ZoneRef: SharedZoneAccess] = [:]
    }

    private let state = Mutex(State())

    /// Moves the zone's generation on: one more change seen.
    func advance(_ zone: StoreView.ZoneRef) {
        state.withLock { $0.generations[zone, default: 0] += 1 }
    }

    /// The zone's generation; nil until the view sees its first change.
    func generation(_ zone: StoreView.ZoneRef) -> UInt64? {
        state.withLock { $0.generations[zone] }
    }

    /// Whether the listing of `folder` last served is of its zone's generation now and the
    /// folder has nothing in flight (`inFlight`, asked under this lock).
    func servedListingIsCurrent(_ folder: NodeKey, in zone: StoreView.ZoneRef, inFlight: (NodeKey) -> Bool) -> Bool {
        state.withLock { state in
            guard let served = state.servedListings[folder], !inFlight(folder) else { return false }
            return served == state.generations[zone]
        }
    }

    /// Notes that the listing of `folder` was served as of `generation` (read before the
    /// listing was); nothing is noted while the folder has something in flight.
    func noteServed(_ folder: NodeKey, at generation: UInt64?, inFlight: (NodeKey) -> Bool) {
        state.withLock { $0.servedListings[folder] = inFlight(folder) ? nil : generation }
    }

    /// The zone's generation (0 before its first change) and the shared access kept for it,
    /// read together: what is kept is current when its generation is the one returned.
    func sharedAccess(_ zone: StoreView.ZoneRef) -> (generation: UInt64, kept: SharedZoneAccess?) {
        state.withLock { ($0.generations[zone, default: 0], $0.sharedAccess[zone]) }
    }

    func keep(_ access: SharedZoneAccess, for zone: StoreView.ZoneRef) {
        state.withLock { $0.sharedAccess[zone] = access }
    }
}
