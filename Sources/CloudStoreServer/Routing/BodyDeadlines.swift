import Foundation
import NIOCore

/// The time limits of the request bodies being read, kept in one table that one repeating
/// timer sweeps: a body past its deadline has its connection's input shut, which ends the body
/// where it stands.
///
/// One sweep a fraction of the limit apart costs a lock and a table entry a request; a timer a
/// request cost a cross-thread wake-up of the event loop to schedule it and another to cancel
/// it, a tenth of a lookup's time.
/// `@unchecked Sendable`: `entries`, `nextID` and `sweeper` are only touched under `lock`.
final class BodyDeadlines: @unchecked Sendable {
    /// One body being read.
    struct Ticket: Sendable { fileprivate let id: UInt64 }

    private struct Entry {
        var deadline: NIODeadline
        var channel: any Channel
        var expired = false
    }

    private let lock = NSLock()
    private var entries: [UInt64: Entry] = [:]
    private var nextID: UInt64 = 0
    /// The repeating sweep, once the first body started it; cancelled with the table.
    private var sweeper: RepeatedTask?
    private let timeout: TimeAmount
    /// The limit, in seconds.
    let seconds: Double
    /// How often the table is swept: a quarter of the limit, between 50 ms and 1 s.
    private let interval: TimeAmount

    init(timeout seconds: Double) {
        self.seconds = seconds
        timeout = .nanoseconds(Int64(seconds * 1e9))
        interval = .nanoseconds(Int64(min(1, max(0.05, seconds / 4)) * 1e9))
    }

    /// Starts the clock on a body read from `channel`.
    func start(_ channel: any Channel) -> Ticket {
        let deadline = NIODeadline.now() + timeout
        let interval = self.interval
        return lock.withLock {
            nextID += 1
            entries[nextID] = Entry(deadline: deadline, channel: channel)
            if sweeper == nil {
                // The first body's event loop sweeps for every connection, until the table goes.
                sweeper = channel.eventLoop.scheduleRepeatedTask(initialDelay: interval, delay: interval) { [weak self] _ in self?.sweep() }
            }
            return Ticket(id: nextID)
        }
    }

    deinit { sweeper?.cancel() }

    /// Stops the clock; true when the body ran out of time first.
    func finish(_ ticket: Ticket) -> Bool {
        lock.withLock { entries.removeValue(forKey: ticket.id)?.expired ?? false }
    }

    private func sweep() {
        let now = NIODeadline.now()
        let late = lock.withLock { () -> [any Channel] in
            var late: [any Channel] = []
            for (id, entry) in entries where !entry.expired && entry.deadline <= now {
                entries[id]!.expired = true
                late.append(entry.channel)
            }
            return late
        }
        for channel in late { channel.close(mode: .input, promise: nil) }
    }
}
