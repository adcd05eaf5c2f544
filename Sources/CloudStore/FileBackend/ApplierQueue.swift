import Foundation

/// The entries an opening of a zone committed whose record files its write-behind applier has
/// still to write, with what the applier and the next writer need to know of them: the lock
/// file of the zone they were committed to, whether the applier is scheduled, this opening's
/// last commit, and whether the applier failed (then the next writer applies from the log).
///
/// Its lock is its own, a leaf: no lock is taken under it. It is kept apart from the zone's
/// state lock because nothing read under that lock needs the queue in the same step: the
/// applier checks the lock file it writes under against ``take(stopping:)``'s inode, and every
/// entry is in the log (and in the state's unapplied records) before it is queued.
final class ApplierQueue: @unchecked Sendable {
    /// Guards every `var` below.
    private let lock = NSLock()
    private var entries: [(LogEntry, end: Int64)] = []
    /// The inode of the lock file of the zone `entries` were committed to: an applier that
    /// finds another lock file locked drops them (the zone was made again meanwhile).
    private var lockInode: UInt64 = 0
    private var scheduled = false
    /// The sequence number of this opening's last commit: while the log ends there, every
    /// entry not yet in the files is queued here.
    private var lastOwnCommit: Int64 = -1
    private var failed = false

    /// Queues `entry`, committed to the zone whose lock file has inode `lockInode`, ending at
    /// log offset `end`.
    func committed(_ entry: LogEntry, end: Int64, lockInode: UInt64) {
        lock.withLock {
            lastOwnCommit = entry.seq
            if entries.isEmpty { self.lockInode = lockInode }
            entries.append((entry, end))
        }
    }

    /// The entries queued now.
    var queued: [(LogEntry, end: Int64)] { lock.withLock { entries } }

    /// Drops every queued entry (a zone deleted, made again, or recovered); with
    /// `clearingFailure`, the next writer trusts the applier again.
    func clear(clearingFailure: Bool = false) {
        lock.withLock {
            entries = []
            if clearingFailure { failed = false }
        }
    }

    /// Whether every entry up to `seq` that the files lack is queued here: `seq` is this
    /// opening's last commit and the applier has not failed.
    func holdsEverything(upTo seq: Int64) -> Bool {
        lock.withLock { lastOwnCommit == seq && !failed }
    }

    /// Notes whether the applier (or a writer applying for it) failed to write a file.
    func noteFailure(_ failed: Bool) {
        lock.withLock { self.failed = failed }
    }

    /// Marks the applier scheduled; false when it is already, or there is nothing to apply.
    func schedule() -> Bool {
        lock.withLock {
            if scheduled || entries.isEmpty { return false }
            scheduled = true
            return true
        }
    }

    /// Takes every queued entry with the inode of the lock file they were committed to, taken
    /// together. With nothing queued and `stopping`, the applier is no longer scheduled.
    func take(stopping: Bool) -> (entries: [(LogEntry, end: Int64)], lockInode: UInt64) {
        lock.withLock {
            let taken = entries
            entries = []
            if taken.isEmpty && stopping { scheduled = false }
            return (taken, lockInode)
        }
    }
}
