import Foundation

/// A value shared with closures that may run on any thread.
///
/// `@unchecked Sendable`: `stored` is only touched under `lock`.
package final class LockedBox<T>: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: T
    package init(_ value: T) { stored = value }
    package var value: T { lock.withLock { stored } }
    package func mutate(_ body: (inout T) -> Void) { lock.withLock { body(&stored) } }
}
