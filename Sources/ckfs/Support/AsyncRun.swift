import ArgumentParser
import Dispatch

extension ParsableCommand {
    /// Runs a server's asynchronous work from a synchronous `run()`, and ends the process when
    /// the work ends: with status 0, or with the error reported as the parser reports one.
    ///
    /// The command tree is synchronous, so every other command parses and runs on the main
    /// thread and a cold `ckfs record fetch` starts no worker thread to wait for
    /// (docs/Performance.md, row 10e). The work runs in a task on the global executor while the
    /// main thread serves the main queue, as an `async` main does.
    func runUntilDone(_ work: @escaping @Sendable () async throws -> Void) -> Never {
        Task {
            do {
                try await work()
            } catch {
                Self.exit(withError: error)
            }
            Self.exit()
        }
        dispatchMain()
    }
}
