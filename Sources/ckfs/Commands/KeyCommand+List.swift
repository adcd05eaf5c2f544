import ArgumentParser
import CloudStore
import CloudStoreServerCore
import Foundation

extension KeyCommand {
    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "list", abstract: "List the container's server-to-server keys: ID, identity, date added.")
        @OptionGroup var options: StoreOptions

        func run() throws {
            try reportingErrors {
                for key in try options.openStore().container(options.container).serverKeys() {
                    let added = ISO8601DateFormatter().string(from: Date(timeIntervalSince1970: Double(key.created) / 1000))
                    print("\(key.keyID)  \(key.userName)  \(added)")
                }
            }
        }
    }
}
