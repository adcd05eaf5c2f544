import ArgumentParser
import CloudStore

struct ImportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Load what `ckfs export` wrote into a store.",
        discussion: "With no store at --store, a new one is made holding the export's containers and settings. Into a store that exists, only containers it does not hold are loaded; one it holds is refused and nothing is changed. Change tokens, change tags, notifications and their tokens are kept, so clients go on from where they were."
    )

    @Option(help: "The store directory (env CKFS_STORE; default $XDG_DATA_HOME/ckfs or ~/.local/share/ckfs).")
    var store: String?

    @Option(name: .customLong("container"), help: "Import only this container (repeat for more; default: all).")
    var containers: [String] = []

    @Argument(help: "The folder `ckfs export` wrote.")
    var folder: String

    func run() throws {
        try reportingErrors {
            let choice = StoreChoice(store: store)
            let line = TerminalProgress("importing records")
            let named = containers.isEmpty ? nil : containers
            let show: (StoreCopyProgress) -> Void = { p in line.update(p.records, detail: p.zone) }
            let done = Store.exists(at: choice.storePath)
                ? try choice.openStore().importContents(from: folder, containers: named, progress: show)
                : try Store.create(at: choice.storePath, importing: folder, containers: named, progress: show)
            line.finish()
            print("imported \(done.containers) containers, \(done.zones) zones, \(done.records) records, \(done.assets) assets into \(choice.storePath)")
        }
    }
}
