import ArgumentParser
import CloudStore

struct ImportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Load what `ckfs export` wrote into a store.",
        discussion: "With no store at --store, a new one is made holding the export's containers and settings. Into a store that exists, only containers it does not hold are loaded; one it holds is refused and nothing is changed. An import that stops part way leaves what it made refused when opened; running it again makes it anew. Change tokens, change tags, notifications and their tokens are kept, so clients go on from where they were."
    )

    @Option(help: "The store directory (env CKFS_STORE; default $XDG_DATA_HOME/ckfs or ~/.local/share/ckfs).")
    var store: String?

    @Option(name: .customLong("container"), help: "Import only this container (repeat for more; default: all).")
    var containers: [String] = []

    @Option(name: .customLong("user"), help: "Import only this user's private databases, key-value store and notifications, without the public database (repeat for more).")
    var users: [String] = []

    @Option(name: .customLong("zone"), help: "Import only zones of this name, with their subscriptions (repeat for more).")
    var zones: [String] = []

    @Argument(help: "The folder `ckfs export` wrote.")
    var folder: String

    func run() throws {
        try reportingErrors {
            let choice = StoreChoice(store: store)
            let line = TerminalProgress("importing records")
            let (named, people, places) = (containers.isEmpty ? nil : containers, users.isEmpty ? nil : users, zones.isEmpty ? nil : zones)
            let show: (StoreCopyProgress) -> Void = { p in line.update(p.records, detail: p.zone) }
            let done = Store.exists(at: choice.storePath)
                ? try choice.openStore().importContents(from: folder, containers: named, users: people, zones: places, progress: show)
                : try Store.create(at: choice.storePath, importing: folder, containers: named, users: people, zones: places, progress: show)
            line.finish()
            print("imported \(done.containers) containers, \(done.zones) zones, \(done.records) records, \(done.assets) assets into \(choice.storePath)")
        }
    }
}
