import ArgumentParser
import CloudStore

/// The store `ckfs export` and `ckfs import` work on, and what narrows their copy.
struct CopyOptions: ParsableArguments {
    @Option(help: "The store directory (env CKFS_STORE; default $XDG_DATA_HOME/ckfs or ~/.local/share/ckfs).")
    var store: String?

    @Option(name: .customLong("container"), help: "Copy only this container (repeat for more; default: all).")
    var containers: [String] = []

    @Option(name: .customLong("user"), help: "Copy only this user's private databases, key-value store and notifications, without the public database (repeat for more).")
    var users: [String] = []

    @Option(name: .customLong("zone"), help: "Copy only zones of this name, with their subscriptions (repeat for more).")
    var zones: [String] = []

    var storePath: String { StoreChoice(store: store).storePath }

    /// The narrowing options as the engine takes them: nil for one not given.
    var narrowing: (containers: [String]?, users: [String]?, zones: [String]?) {
        (containers.isEmpty ? nil : containers, users.isEmpty ? nil : users, zones.isEmpty ? nil : zones)
    }

    /// A progress line on a terminal, counting records, with the zone being copied.
    func progressLine(_ title: String) -> (TerminalProgress, (StoreCopyProgress) -> Void) {
        let line = TerminalProgress(title)
        return (line, { p in line.update(p.records, detail: p.zone) })
    }
}
