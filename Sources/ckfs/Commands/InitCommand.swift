import ArgumentParser
import CloudStore

struct InitCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "init", abstract: "Create a store; running it again is harmless.")

    @OptionGroup var options: DatabaseOptions

    @Option(help: "The default container of a new store.")
    var defaultContainer: String?

    @Option(help: "Bytes each user's private data may use in the container.")
    var privateQuota: Int64?

    @Option(help: "Bytes the container's public data may use.")
    var publicQuota: Int64?

    @Option(help: "Compact a zone's log past this many bytes (change tokens older than what is kept expire).")
    var compactLogBytes: Int64?

    func validate() throws {
        if let b = compactLogBytes, b < 4096 { throw ValidationError("--compact-log-bytes must be at least 4096") }
        if let q = privateQuota, q < 0 { throw ValidationError("--private-quota must be 0 or more bytes") }
        if let q = publicQuota, q < 0 { throw ValidationError("--public-quota must be 0 or more bytes") }
    }

    func run() throws {
        try reportingErrors {
            var settings = StoreSettings()
            if let c = defaultContainer {
                try Names.checkContainerIdentifier(c)
                settings.defaultContainer = c
            }
            if let b = compactLogBytes { settings.compactLogBytes = b }
            let store = try Store.create(at: options.storePath, settings: settings)
            if privateQuota != nil || publicQuota != nil {
                try store.container(options.container).setQuotas(privateBytes: privateQuota, publicBytes: publicQuota)
            }
            print("store ready at \(store.layout.root) (default container \(store.settings.defaultContainer))")
        }
    }
}
