import ArgumentParser
import CloudStore
import CloudStoreFS
import Foundation

struct UnmountCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "unmount", abstract: "Unmount a ckfs mount, also one whose daemon died.")

    @Argument(help: "The mount point.")
    var mountPoint: String = "Mount"

    func run() throws {
        let path = absolute(mountPoint)
        // A daemon that died with clients waiting on it may have left its connection open:
        // end it first (asking the file system anything here could wait for ever).
        var aborted = false
        if let connection = FuseConnection.at(path), !connection.daemonIsAlive { aborted = connection.abort() }
        var dead = aborted
        // A plain stat (times asked for): statx of the type alone may be answered from the
        // kernel's cached attributes.
        if !dead, case .failure(let e) = Syscall.stat(path, times: true), e.errno == Posix.ENOTCONN { dead = true }
        guard dead || MountTable.isMounted(path) else {
            throw ValidationError("\(path) is not mounted")
        }
        for args in [["-u", path], ["-uz", path]] {
            // The engine's posix_spawn, not Foundation's Process: its run() reads past
            // readdir's buffer (see Syscall.forEachName).
            let pid = try Syscall.spawn("/usr/bin/env", arguments: ["env", "fusermount3"] + args,
                                        environment: ProcessInfo.processInfo.environment, files: .init(), closeOthers: true)
                .orThrow(.internalError, "cannot run fusermount3")
            let status = try Syscall.waitForExit(pid).orThrow(.internalError, "waiting for fusermount3")
            if status == 0 && !MountTable.isMounted(path) {
                print(dead ? "unmounted \(path) (its daemon had died; saved records are safe in the store)" : "unmounted \(path)")
                return
            }
        }
        throw ExitCode(1)
    }
}
