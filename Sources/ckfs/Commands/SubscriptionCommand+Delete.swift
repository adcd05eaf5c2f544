import ArgumentParser
import CloudStore
import Foundation

extension SubscriptionCommand {
    struct Delete: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "delete", abstract: "Delete subscriptions by ID.")

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
