import ArgumentParser
import DaemonCommandLine

/// The program `ckfs serve` and `ckfs debug http-floor` become, in the same process and with
/// the same arguments (`ckfs-server serve --port 0 …`). It holds the HTTP server, which the
/// `ckfs` binary leaves out.
@main
struct CKFSServer: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: ServerProgram.name,
        abstract: "ckfs's web server; run it as `ckfs serve`.",
        subcommands: [ServeCommand.self, HTTPFloorCommand.self]
    )
}
