import ArgumentParser
import CloudStore
import Foundation

extension KeyValueCommand {
    struct Remove: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "remove", abstract: "Remove a key and write the change to disk.")
        @OptionGroup var options: StoreOptions
        @Argument(help: "The key.") var key: String

        func run() throws {
            try reportingErrors {
                let kv = try options.openKeyValueStore()
                guard kv.value(forKey: key) != nil else {
                    throw CKError(.unknownItem, "no key \"\(key)\" in the key-value store of \(kv.user); `ckfs kv list` shows the keys")
                }
                try kv.removeValue(forKey: key)
                // A removal always fits; the store's own refusal (a file past the limits) throws.
                try kv.sync()
                print("removed \(key)")
            }
        }
    }
}
