import Foundation

/// Objects made once from an error's values, so that reading one twice gives the same object:
/// CloudKit code takes `serverRecord`, changes it and saves it, and may compare it by
/// identity. The copies of an error share one.
/// `@unchecked Sendable`: `made` is only touched under `lock`.
public final class ErrorObjects: @unchecked Sendable {
    private let lock = NSLock()
    private var made: [String: (source: Record, object: AnyObject)] = [:]

    init() {}

    /// The object for `key` made from `source` by `make`, the same one each time while the
    /// source stays the same.
    func object<T: AnyObject>(_ key: String, from source: Record?, make: (Record) -> T) -> T? {
        guard let source else { return nil }
        return lock.withLock {
            if let hit = made[key], hit.source == source, let object = hit.object as? T { return object }
            let object = make(source)
            made[key] = (source, object)
            return object
        }
    }
}
