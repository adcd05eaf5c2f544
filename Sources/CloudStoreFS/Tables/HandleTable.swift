import Foundation

/// Open files and directories by the number the kernel hands back (`fh`).
///
/// The table's lock is a leaf (see ``InodeTable``); each handle guards its own state.
final class HandleTable<Handle: AnyObject & Sendable>: @unchecked Sendable {
    /// Guards `handles` and `next`.
    private let lock = NSLock()
    private var handles: [UInt64: Handle] = [:]
    private var next: UInt64 = 1

    func add(_ handle: Handle) -> UInt64 {
        lock.withLock {
            let fh = next
            next += 1
            handles[fh] = handle
            return fh
        }
    }

    func get(_ fh: UInt64) -> Handle? { lock.withLock { handles[fh] } }

    @discardableResult
    func remove(_ fh: UInt64) -> Handle? { lock.withLock { handles.removeValue(forKey: fh) } }

    var all: [Handle] { lock.withLock { Array(handles.values) } }
}
