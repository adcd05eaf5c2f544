import ArgumentParser

@main
struct CKFS: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ckfs",
        abstract: "A local CloudKit store kept as plain JSON files.",
        version: "ckfs 0.1.0",
        subcommands: [
            InitCommand.self, MountCommand.self, UnmountCommand.self, MountWatchdogCommand.self, RecordCommand.self, ZoneCommand.self, KeyValueCommand.self, ChangesCommand.self, SchemaCommand.self,
            SubscriptionCommand.self, NotificationsCommand.self, UserCommand.self, PermissionCommand.self, ShareCommand.self,
            ServeCommand.self, KeyCommand.self, TokenCommand.self,
            FsckCommand.self, ExportCommand.self, ImportCommand.self, BenchCommand.self,
            DebugCommand.self,
        ]
    )

    /// The commands whose arguments ``DirectCommandLine`` reads first: those a script runs cold
    /// again and again.
    static let directCommands: [any DirectlyParsed.Type] = [RecordCommand.Fetch.self, RecordCommand.Query.self, ChangesCommand.self]

    /// Runs a hot command from arguments ``DirectCommandLine`` reads, anything else through
    /// ArgumentParser; errors are reported the same way in both.
    static func main() {
        // From argv itself: the standard library's `CommandLine.arguments` finds its array's
        // type by demangling its name at its first use, 2-3% of a cold query's time. (A program
        // may be started with no argv at all.)
        let arguments = (1..<max(1, Int(CommandLine.argc))).map { String(cString: CommandLine.unsafeArgv[$0]!) }
        guard let request = DirectCommandLine.request(arguments, among: directCommands) else { return main(nil) }
        do { try request.run() } catch { exit(withError: error) }
    }
}
