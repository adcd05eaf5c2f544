import ArgumentParser
import CloudStore

struct ImportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Load what `ckfs export` wrote into a store.",
        discussion: "With no store at --store, a new one is made holding the export's containers and settings. Into a store that exists, only containers it does not hold are loaded; one it holds is refused and nothing is changed, unless --skip-held: then the store's are left as they are and the others loaded. An import that stops part way leaves what it made refused when opened; running it again makes it anew. Change tokens, change tags, notifications and their tokens are kept, so clients go on from where they were."
    )

    @OptionGroup var options: CopyOptions

    @Flag(help: "Leave the containers the store holds as they are, and load only the others.")
    var skipHeld = false

    @Argument(help: "The folder `ckfs export` wrote.")
    var folder: String

    func run() throws {
        try reportingErrors {
            let path = options.storePath
            let (line, show) = options.progressLine("importing records")
            let only = options.narrowing
            let done = Store.exists(at: path)
                ? try StoreChoice(store: options.store).openStore()
                    .importContents(from: folder, containers: only.containers, users: only.users, zones: only.zones, skippingHeld: skipHeld, progress: show)
                : try Store.create(at: path, importing: folder, containers: only.containers, users: only.users, zones: only.zones, progress: show)
            line.finish()
            print("imported \(done.containers) containers, \(done.zones) zones, \(done.records) records, \(done.assets) assets into \(path)"
                + (done.skipped.isEmpty ? "" : "; left as they were: \(done.skipped.joined(separator: ", "))"))
        }
    }
}
