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

extension SubscriptionCommand {
    struct Create: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Save a query or zone subscription and print it.")

        @OptionGroup var place: Place
        @Option(help: "The record type of a query subscription.") var type: String?
        @Option(help: "The predicate of a query subscription (default TRUEPREDICATE).") var predicate = "TRUEPREDICATE"
        @Option(help: "A %@ or %K argument of the predicate, as for `record query`.") var arg: [String] = []
        @Option(help: "When a query subscription fires: create, update, delete, comma-separated or repeated.") var on: [String] = []
        @Flag(help: "Delete the subscription after its first notification.") var once = false
        @Option(help: "The zone watched: required for a zone subscription; a query subscription without it watches every zone.") var zone: String?
        @Option(help: "The subscription ID (default: a new UUID).") var id: String?
        @Option(help: "The alert text of its notifications.") var alert: String?
        @Option(help: "The alert title.") var title: String?
        @Option(help: "The sound name.") var sound: String?
        @Option(help: "The notification category.") var category: String?
        @Flag(help: "Count its notifications in the user's badge.") var badge = false
        @Flag(help: "Mark its notifications content-available.") var contentAvailable = false
        @Option(help: "Record fields its notifications carry, comma-separated.") var keys: String?

        var triggers: [String] { on.flatMap(commaList).map { $0.lowercased() } }

        func validate() throws {
            if type == nil {
                guard zone != nil else { throw ValidationError("give --type for a query subscription, or --zone for a zone subscription") }
                guard on.isEmpty && !once else { throw ValidationError("--on and --once are for query subscriptions (--type); a zone subscription fires on every change") }
                guard predicate == "TRUEPREDICATE" && arg.isEmpty else { throw ValidationError("--predicate is for query subscriptions (--type)") }
            } else {
                guard !triggers.isEmpty else { throw ValidationError("--on: say when it fires: create, update and/or delete") }
                for t in triggers where !["create", "update", "delete"].contains(t) {
                    throw ValidationError("--on: \(t) is not create, update or delete")
                }
                _ = try parsedPredicate()
            }
        }

        func parsedPredicate() throws -> QueryPredicate {
            do { return try PredicateParser.parse(predicate, arguments: try arg.map(RecordCommand.Query.argument)) } catch let e as PredicateParser.SyntaxError {
                throw ValidationError("--predicate: \(e)")
            }
        }

        func run() throws {
            try reportingErrors {
                let db = try place.openDatabase()
                let info = NotificationInfo(alertBody: alert, title: title, soundName: sound, category: category, shouldBadge: badge,
                                            shouldSendContentAvailable: contentAvailable,
                                            desiredKeys: keys.map(commaList))
                let subscription: Subscription
                if let type {
                    var options: SubscriptionOptions = once ? .firesOnce : []
                    if triggers.contains("create") { options.insert(.firesOnRecordCreation) }
                    if triggers.contains("update") { options.insert(.firesOnRecordUpdate) }
                    if triggers.contains("delete") { options.insert(.firesOnRecordDeletion) }
                    subscription = Subscription(recordType: type, predicate: try parsedPredicate(), subscriptionID: id,
                                                options: options, zoneName: zone, notificationInfo: info)
                } else {
                    subscription = Subscription(zoneName: zone!, subscriptionID: id, notificationInfo: info)
                }
                Report.printJSON(try db.saveSubscription(subscription).dictionary(in: db))
            }
        }
    }

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Print your subscriptions in a database as a JSON array.")

        @OptionGroup var place: Place

        func run() throws {
            try reportingErrors {
                let db = try place.openDatabase()
                Report.printJSON(.array(try db.subscriptions().map { $0.dictionary(in: db) }))
            }
        }
    }

    struct Delete: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Delete subscriptions by ID.")

        @OptionGroup var place: Place
        @Argument(help: "Subscription IDs.") var ids: [String]

        func validate() throws {
            if ids.isEmpty { throw ValidationError("name the subscription IDs to delete; `ckfs subscription list` shows them") }
        }

        func run() throws {
            try reportingErrors {
                let result = try place.openDatabase().modifySubscriptions(saving: [], deleting: ids)
                var failures: [CKItemID: CKError] = [:]
                for (id, r) in result.deleted {
                    switch r {
                    case .success: print("deleted \(id)")
                    case .failure(let e): failures[.subscription(id)] = e
                    }
                }
                if failures.count == 1 { throw failures.first!.value }
                if let e = CKError.partialFailure(failures, "\(failures.count) of \(ids.count) subscriptions could not be deleted") { throw e }
            }
        }
    }
}
