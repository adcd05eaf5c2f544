import Synchronization

/// The lock file's two markers as one opening of a zone last read or wrote them, with what
/// they say: a marker whose bytes are the same is not parsed again, and most reads find what
/// the opening's own writer and applier wrote. Apart from the rest of ``ZoneFolder``'s state:
/// its lock is its own, a leaf, taken alone.
final class MarkerMemo: Sendable {
    private struct Memo {
        var commit: (bytes: [UInt8], marker: CommitMarker?)?
        var apply: (bytes: [UInt8], marker: ApplyMarker?)?
    }

    private let memo = Mutex(Memo())

    /// The commit marker `bytes` hold (nil: none, or not a marker).
    func commit(in bytes: ArraySlice<UInt8>) -> CommitMarker? {
        if let known = memo.withLock({ $0.commit }), known.bytes.elementsEqual(bytes) { return known.marker }
        let marker = CommitMarker(bytes: bytes)
        memo.withLock { $0.commit = (Array(bytes), marker) }
        return marker
    }

    /// The apply marker `bytes` hold (nil: none, as in a lock file from before it existed).
    func apply(in bytes: ArraySlice<UInt8>) -> ApplyMarker? {
        if let known = memo.withLock({ $0.apply }), known.bytes.elementsEqual(bytes) { return known.marker }
        let marker = bytes.isEmpty ? nil : ApplyMarker(bytes: bytes)
        memo.withLock { $0.apply = (Array(bytes), marker) }
        return marker
    }

    /// Notes the commit marker this opening wrote as `bytes`.
    func wrote(_ marker: CommitMarker, as bytes: [UInt8]) {
        memo.withLock { $0.commit = (bytes, marker) }
    }

    /// Notes the apply marker this opening wrote as `bytes`.
    func wrote(_ marker: ApplyMarker, as bytes: [UInt8]) {
        memo.withLock { $0.apply = (bytes, marker) }
    }
}
