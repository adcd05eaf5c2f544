import Foundation
import Glibc
import Logging

extension StoreView {
    /// Scratch files (editors' and tools' temporary files) live in the daemon's memory, so
    /// what any account holder can make there is bounded: per uid, past which writes fail with
    /// EDQUOT, and in all, past which they fail with ENOSPC.
    static let scratchBytesPerUser = 64 << 20
    static let scratchBytesInAll = 256 << 20

    /// Counts `bytes` as `s`'s size from now on, or throws when growing to it passes a bound.
    /// The scratch file's lock held.
    func accountScratch(_ s: ScratchFile, bytes: Int) throws(FSError) {
        let refusal = stateLock.withLock { () -> FSError? in
            let growth = bytes - s.accounted
            if growth > 0 {
                if scratchUsage[s.uid, default: 0] + growth > Self.scratchBytesPerUser {
                    return FSError(EDQUOT, "uid \(s.uid)'s temporary files in the mount hold \(Self.scratchBytesPerUser >> 20) MiB at most; remove some (editors' swap and backup files, unfinished copies)")
                }
                if scratchTotal + growth > Self.scratchBytesInAll {
                    return FSError(ENOSPC, "temporary files in the mount hold \(Self.scratchBytesInAll >> 20) MiB at most in all; remove some")
                }
            }
            accountScratchLocked(s, bytes: bytes)
            return nil
        }
        if let refusal {
            logger.notice("refused a write to a temporary file: \(refusal.reason)")
            throw refusal
        }
    }

    /// State lock held. Counts `bytes` as `s`'s size whatever the bounds: for text that exists
    /// already (an item renamed to a scratch name), or a file emptied or gone.
    func accountScratchLocked(_ s: ScratchFile, bytes: Int) {
        let growth = bytes - s.accounted
        s.accounted = bytes
        scratchUsage[s.uid, default: 0] += growth
        if scratchUsage[s.uid] == 0 { scratchUsage[s.uid] = nil }
        scratchTotal += growth
    }
}
