import ArgumentParser

@main
struct CKFS: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ckfs",
        abstract: "A local CloudKit store kept as plain JSON files.",
        version: "ckfs 0.1.0",
        subcommands: [
            Init.self, Mount.self, Unmount.self, MountWatchdog.self, RecordCommand.self, ZoneCommand.self, KeyValueCommand.self, Changes.self, SchemaCommand.self,
            SubscriptionCommand.self, NotificationsCommand.self, UserCommand.self, PermissionCommand.self,
            Fsck.self, BenchCommand.self,
            Debug.self,
        ]
    )
}
