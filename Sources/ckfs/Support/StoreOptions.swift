import ArgumentParser
import CloudStore

/// Where and as whom a command works: the store, the container, the identity, the environment.
struct StoreOptions: ParsableArguments {
    @Option(help: "The store directory (env CKFS_STORE; default $XDG_DATA_HOME/ckfs or ~/.local/share/ckfs).")
    var store: String?

    @Option(help: "The container identifier (default: the store's default container).")
    var container: String?

    @Option(help: "The local identity to act as (default: the OS user).")
    var user: String?

    @Flag(help: "Act with no account: the public database reads, nothing else.")
    var noAccount = false

    @Option(help: "The environment: development or production.")
    var environment: CloudStore.Environment = StoreChoice.defaultEnvironment

    @Option(help: "This client's device ID (env CKFS_DEVICE_ID; default host-pid); a client is not notified of its own changes.")
    var device: String?

    /// The options' values, with what commands ask of them.
    var choice: StoreChoice {
        StoreChoice(store: store, container: container, user: user, noAccount: noAccount, environment: environment, device: device)
    }

    var storePath: String { choice.storePath }
    func openStore(reading: ZoneReading = .indexed) throws -> Store { try choice.openStore(reading: reading) }
    var userName: String { choice.userName }
    var deviceID: String { choice.deviceID }
    var caller: Caller { choice.caller }
    func validate() throws { try choice.validate() }
}
