import Foundation

/// Folders for the stores the CloudKit tests make, removed when the test process exits (a
/// container keeps its store open while a test's objects live, so no test removes its own).
package enum TemporaryStores {
    /// Guards `paths`.
    private static let lock = NSLock()
    nonisolated(unsafe) private static var paths: [String] = []

    /// A new folder name in the temporary directory, starting with `prefix`.
    package static func path(_ prefix: String) -> String {
        let path = NSTemporaryDirectory() + prefix + UUID().uuidString
        lock.withLock {
            if paths.isEmpty { atexit { TemporaryStores.removeAll() } }
            paths.append(path)
        }
        return path
    }

    private static func removeAll() {
        for path in lock.withLock({ paths }) { try? FileManager.default.removeItem(atPath: path) }
    }
}
