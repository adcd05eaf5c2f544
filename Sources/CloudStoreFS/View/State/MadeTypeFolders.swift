import Synchronization

/// Type folders made with `mkdir` that hold no record yet: a zone lists them beside the types
/// of its records until the zone goes or the folder is removed. A leaf lock.
final class MadeTypeFolders: Sendable {
    private let folders = Mutex<Set<NodeKey>>([])

    func contains(_ folder: NodeKey) -> Bool {
        folders.withLock { $0.contains(folder) }
    }

    func insert(_ folder: NodeKey) {
        folders.withLock { _ = $0.insert(folder) }
    }

    func remove(_ folder: NodeKey) {
        folders.withLock { _ = $0.remove(folder) }
    }

    /// The record types of the folders made in a zone.
    func types(in database: DatabaseKey, zone: String) -> [String] {
        folders.withLock { folders in
            folders.compactMap { if case .recordType(database, zone, let type) = $0 { type } else { nil } }
        }
    }

    /// Whether a folder was made in the zone.
    func hasFolder(in database: DatabaseKey, zone: String) -> Bool {
        folders.withLock { $0.contains { $0.zone.map { $0.0 == database && $0.1 == zone } ?? false } }
    }

    /// Forgets the folders made in a zone that went.
    func forgetZone(_ database: DatabaseKey, _ zone: String) {
        folders.withLock { folders in
            folders = folders.filter { $0.zone.map { !($0.0 == database && $0.1 == zone) } ?? true }
        }
    }
}
