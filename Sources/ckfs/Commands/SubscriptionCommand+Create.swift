import ArgumentParser
import CloudStore
import Foundation

extension SubscriptionCommand {
    struct Create: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "create", abstract: "Save a query, zone or database subscription and print it.")

        @OptionGroup var place: Place
        @Option(help: "The record type of a query subscription.") var type: String?
        @Option(help: "The predicate of a query subscription.") var predicate = "TRUEPREDICATE"
        @Option(help: "A %@ or %K argument of the predicate, as for `record query`.") var arg: [String] = []
        @Option(help: "When a query subscription fires: create, update, delete, comma-separated or repeated.") var on: [String] = []
        @Flag(help: "Delete the subscription after its first notification.") var once = false
        @Option(help: "The zone watched: required for a zone subscription; a query subscription without it watches every zone.") var zone: String?
        @Flag(help: "A database subscription: a notification for every change in any zone of the private database.") var wholeDatabase = false
        @Option(help: "A zone or database subscription that fires only for changes to records of this type.") var onlyType: String?
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
            if onlyType != nil, type != nil || !(wholeDatabase || zone != nil) {
                throw ValidationError("--only-type limits a zone (--zone) or database (--whole-database) subscription; a query subscription takes --type")
            }
            if wholeDatabase {
                guard type == nil && zone == nil else { throw ValidationError("--whole-database watches every zone: give neither --type nor --zone") }
                guard on.isEmpty && !once && predicate == "TRUEPREDICATE" && arg.isEmpty else {
                    throw ValidationError("--on, --once and --predicate are for query subscriptions (--type); a database subscription fires on every change")
                }
            } else if type == nil {
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
            do { return try PredicateParser.parse(predicate, arguments: try arg.map(RecordCommand.Query.argument)) } catch let e as SyntaxError {
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
                } else if let zone {
                    subscription = Subscription(zoneName: zone, recordType: onlyType, subscriptionID: id, notificationInfo: info)
                } else {
                    subscription = .database(recordType: onlyType, subscriptionID: id, notificationInfo: info)
                }
                Report.printJSON(try db.saveSubscription(subscription).dictionary(in: db))
            }
        }
    }
}
