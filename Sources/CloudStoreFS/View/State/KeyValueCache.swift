import CloudStore
import Synchronization

/// What the view holds of each key-value store it shows: the store's file, the entries as last
/// read (a snapshot) and the property-list texts rendered of them.
///
/// A kept text is always the held snapshot's: taking a new snapshot drops, in the same step,
/// the texts of every key whose value changed, and a text rendered meanwhile is kept only if
/// the held snapshot still has the value it was rendered from. A leaf lock.
final class KeyValueCache: Sendable {
    private struct State {
        var files: [KeyValueRef: any KeyValueStorage] = [:]
        var snapshots: [KeyValueRef: KeyValueSnapshot] = [:]
        var texts: [ItemTarget: (text: [UInt8], tag: String)] = [:]
    }

    private let state = Mutex(State())

    func file(_ ref: KeyValueRef) -> (any KeyValueStorage)? {
        state.withLock { $0.files[ref] }
    }

    func keep(_ file: any KeyValueStorage, for ref: KeyValueRef) {
        state.withLock { $0.files[ref] = file }
    }

    func snapshot(_ ref: KeyValueRef) -> KeyValueSnapshot? {
        state.withLock { $0.snapshots[ref] }
    }

    /// Takes `fresh` as the store of `ref` and drops the texts of the keys whose values
    /// changed, found against the snapshot held until now; whether there was one.
    func adopt(_ fresh: KeyValueSnapshot, for ref: KeyValueRef) -> (changed: Set<String>, hadOne: Bool) {
        state.withLock { state in
            let before = state.snapshots[ref]?.entries ?? [:]
            let changed = Set(before.keys).union(fresh.entries.keys).filter { before[$0] != fresh.entries[$0] }
            let hadOne = state.snapshots[ref] != nil
            state.snapshots[ref] = fresh
            for key in changed { state.texts[ItemTarget.keyValue(ref, key: key)] = nil }
            return (changed, hadOne)
        }
    }

    func text(_ target: ItemTarget) -> (text: [UInt8], tag: String)? {
        state.withLock { $0.texts[target] }
    }

    /// Keeps the text rendered of `value` for the key, if the held snapshot still has that value.
    func keep(_ rendered: (text: [UInt8], tag: String), of value: PropertyListValue, for ref: KeyValueRef, key: String) {
        state.withLock { state in
            if state.snapshots[ref]?.entries[key] == value { state.texts[ItemTarget.keyValue(ref, key: key)] = rendered }
        }
    }

    /// Every key-value store the view holds a snapshot of, for the change watcher.
    var refs: [KeyValueRef] { state.withLock { Array($0.snapshots.keys) } }
}
