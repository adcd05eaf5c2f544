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
            FsckCommand.self, BenchCommand.self,
            DebugCommand.self,
        ]
    )
}
