import ArgumentParser
import CloudStoreFS
import Foundation

/// Watches a mount's daemon from outside it and ends the mount's connection if the daemon
/// dies while the mount is still there (see ``FuseConnection``): its clients then fail with
/// ENOTCONN instead of waiting for ever, and its last threads exit, letting go of the store's
/// locks. Started by the daemon; ends when the mount does.
struct MountWatchdogCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "mount-watchdog",
        abstract: "Free a mount's clients if its daemon dies (started by the daemon).",
        shouldDisplay: false
    )

    @Argument(help: "The mount point, as an absolute path.")
    var mountPoint: String

    func run() throws {
        guard let watched = FuseConnection.at(mountPoint), watched.daemon != nil else { return }
        while true {
            Thread.sleep(forTimeInterval: 0.2)
            // Unmounted, or mounted again by another daemon: nothing left to watch.
            guard let now = FuseConnection.at(mountPoint), now == watched else { return }
            if !now.daemonIsAlive {
                let ended = now.abort()
                let stamp = ISO8601DateFormatter().string(from: Date())
                print("\(stamp) ckfs: the daemon of \(mountPoint) (pid \(now.daemon ?? 0)) died; \(ended ? "ended its connection, so no client waits on it" : "could not end its connection through fusectl"); run `ckfs unmount \(mountPoint)`")
                return
            }
        }
    }
}
