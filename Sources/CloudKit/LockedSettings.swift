import Foundation
import CloudStore

/// Settings objects that CloudKit code may change from any thread (an operation's
/// configuration, a zone's, a group): their values in one struct behind one lock, read and
/// written by key path.
/// `@unchecked Sendable`: `values` is only touched under `lock`.
final class LockedSettings<Values>: @unchecked Sendable {
    private let lock = NSLock()
    private var values: Values

    init(_ values: Values) { self.values = values }

    subscript<T>(_ key: WritableKeyPath<Values, T>) -> T {
        get { lock.withLock { values[keyPath: key] } }
        set { lock.withLock { values[keyPath: key] = newValue } }
    }

    /// All the values at once, for a copy.
    var all: Values { lock.withLock { values } }
}
