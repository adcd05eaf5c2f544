import ArgumentParser
import CloudStore
import Foundation

struct SubscriptionCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "subscription",
        abstract: "Create, list and delete the subscriptions of a database.",
        discussion: """
        A query subscription (--type) fires for records of a type that match a predicate, on \
        create, update (the record matches after the change) or delete (it matched before). A \
        zone subscription (--zone without --type) fires on every change in a custom zone of the \
        private database. Notifications go to every client of the user but the one that made \
        the change; read them with `ckfs notifications`.
        """,
        subcommands: [Create.self, List.self, Delete.self]
    )

    /// The database a subscription command works on.
    struct Place: ParsableArguments {
        @OptionGroup var store: StoreOptions
        @Option(help: "The database: public or private.") var database: DatabaseScope = .private

        func openDatabase() throws -> Database {
            try store.openStore().container(store.container).database(database, caller: store.caller, environment: store.environment)
        }
    }
}
