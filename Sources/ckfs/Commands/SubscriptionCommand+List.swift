import ArgumentParser
import CloudStore
import Foundation

extension SubscriptionCommand {
    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "list", abstract: "Print your subscriptions in a database as a JSON array.")

        @OptionGroup var place: Place

        func run() throws {
            try reportingErrors {
                let db = try place.openDatabase()
                Report.printJSON(.array(try db.subscriptions().map { $0.dictionary(in: db) }))
            }
        }
    }
}
