import ArgumentParser
import CloudStore

struct ExportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export",
        abstract: "Write the store, or some of its containers, as a new store in a folder.",
        discussion: "The folder gets the plain file layout a store keeps (JSON, property lists, asset files), which `ls`, `cat`, `tar` and any JSON reader read, and which `ckfs import` loads into another store. Each zone is written whole as of one commit, with the history its change tokens need, so clients that synced before the move go on from where they were. Writers may write meanwhile: each zone is written as of one commit, its writers waiting while it is copied, and zones one after another."
    )

    @Option(help: "The store directory (env CKFS_STORE; default $XDG_DATA_HOME/ckfs or ~/.local/share/ckfs).")
    var store: String?

    @Option(name: .customLong("container"), help: "Export only this container (repeat for more; default: all).")
    var containers: [String] = []

    @Option(name: .customLong("user"), help: "Export only this user's private databases, key-value store and notifications, without the public database (repeat for more).")
    var users: [String] = []

    @Option(name: .customLong("zone"), help: "Export only zones of this name, with their subscriptions (repeat for more).")
    var zones: [String] = []

    @Argument(help: "The folder to write: it must not exist or be empty.")
    var folder: String

    func run() throws {
        try reportingErrors {
            let source = try StoreChoice(store: store).openStore()
            let line = TerminalProgress("exporting records")
            let done = try source.export(to: folder, containers: containers.isEmpty ? nil : containers, users: users.isEmpty ? nil : users,
                                         zones: zones.isEmpty ? nil : zones) { p in
                line.update(p.records, detail: p.zone)
            }
            line.finish()
            print("exported \(done.containers) containers, \(done.zones) zones, \(done.records) records, \(done.assets) assets to \(folder)")
        }
    }
}
