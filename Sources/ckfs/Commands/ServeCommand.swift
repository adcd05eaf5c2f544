import ArgumentParser
import DaemonCommandLine

struct ServeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Serve the store as CloudKit Web Services over HTTP, in the foreground."
    )

    @OptionGroup var options: ServeOptions

    func run() throws {
        try ServerLaunch.become(ServerProgram.serve, after: ["serve"])
    }
}
