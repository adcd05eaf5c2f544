import ArgumentParser
import CloudStore

struct ExportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export",
        abstract: "Write the store, or some of its containers, as a new store in a folder.",
        discussion: "The folder gets the plain file layout a store keeps (JSON, property lists, asset files), which `ls`, `cat`, `tar` and any JSON reader read, and which `ckfs import` loads into another store. Each zone is written whole as of one commit, with the history its change tokens need, so clients that synced before the move go on from where they were. Writers may write meanwhile: a zone's writers wait while it is copied, and zones go one after another."
    )

    @OptionGroup var options: CopyOptions

    @Argument(help: "The folder to write: it must not exist or be empty.")
    var folder: String

    func run() throws {
        try reportingErrors {
            let source = try StoreChoice(store: options.store).openStore()
            let (line, show) = options.progressLine("exporting records")
            let only = options.narrowing
            let done = try source.export(to: folder, containers: only.containers, users: only.users, zones: only.zones, progress: show)
            line.finish()
            print("exported \(done.containers) containers, \(done.zones) zones, \(done.records) records, \(done.assets) assets to \(folder)")
        }
    }
}
