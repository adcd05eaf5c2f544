import Foundation

/// Objects made once from an error's values, so that reading one twice gives the same object:
/// CloudKit code takes `serverRecord`, changes it and saves it, and may compare it by
/// identity. The copies of an error share one.
///
/// `@unchecked Sendable`: `made` and `maker` are only touched under `lock`.
package final class ErrorObjects: @unchecked Sendable {
    private let lock = NSLock()
    private var made: [String: (source: Record, object: AnyObject)] = [:]
    private var maker: (@Sendable (Record) -> AnyObject)?

    init() {}

    /// How the records of the error are shown to the code that gets it: as the database it
    /// came from shows its records (their zones' owners, their assets' files). Set by the
    /// floor that hands the error out, once; nil until then.
    public var presenter: (@Sendable (Record) -> AnyObject)? { lock.withLock { maker } }

    /// Sets ``presenter`` unless it is set already.
    package func present(with presenter: @escaping @Sendable (Record) -> AnyObject) {
        lock.withLock { if maker == nil { maker = presenter } }
    }

    /// The object for `key` made from `source` by `make`, the same one each time while the
    /// source stays the same.
    package func object<T: AnyObject>(_ key: String, from source: Record?, make: (Record) -> T) -> T? {
        guard let source else { return nil }
        return lock.withLock {
            if let hit = made[key], hit.source == source, let object = hit.object as? T { return object }
            let object = make(source)
            made[key] = (source, object)
            return object
        }
    }
}
