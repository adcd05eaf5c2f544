import CloudStore
import Foundation
import Synchronization

/// How far long work has come, on one line of standard error that rewrites itself, shown only
/// when standard error is a terminal: a pipe, a log file or `--json` output gets none of it.
///
/// ```swift
/// let progress = TerminalProgress("saving", total: records.count)
/// for i in records.indices { save(records[i]); progress.update(i + 1) }
/// progress.finish()
/// ```
final class TerminalProgress: Sendable {
    private let title: String
    private let total: Int?
    private let shown: Bool
    /// When the line was last drawn, and whether it is on the screen now.
    private let state = Mutex<(lastDraw: UInt64, drawn: Bool)>((0, false))

    /// Whether standard error is a terminal that progress can be drawn on.
    static var terminalAttached: Bool { Syscall.isTerminal(Posix.STDERR_FILENO) && Syscall.environmentValue("TERM") != "dumb" }

    /// `quiet` turns it off whatever standard error is (as `--json` does).
    init(_ title: String, total: Int? = nil, quiet: Bool = false) {
        self.title = title
        self.total = total
        self.shown = !quiet && Self.terminalAttached
    }

    /// Shows `done` (of the total, if known) and `detail`, at most ten times a second.
    func update(_ done: Int, detail: String = "") {
        guard shown else { return }
        let now = DispatchTime.now().uptimeNanoseconds
        let due = state.withLock { s in
            guard !s.drawn || now - s.lastDraw >= 100_000_000 || done == total else { return false }
            s.lastDraw = now
            return true
        }
        guard due else { return }
        var line = "\(title): \(done)"
        if let total, total > 0 { line += " of \(total) (\(done * 100 / total)%)" }
        if !detail.isEmpty { line += ", \(detail)" }
        draw(line)
    }

    /// Clears the progress line.
    func finish() {
        guard shown else { return }
        state.withLock { s in
            if s.drawn { writeToStandardError("\r\u{1B}[K") }
            s.drawn = false
        }
    }

    private func draw(_ text: String) {
        state.withLock { s in
            writeToStandardError("\r\u{1B}[K" + text)
            s.drawn = true
        }
    }
}
