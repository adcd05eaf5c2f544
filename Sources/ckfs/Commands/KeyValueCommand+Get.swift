import ArgumentParser
import CloudStore
import Foundation

extension KeyValueCommand {
    struct Get: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "get", abstract: "Print the value of a key.")
        @OptionGroup var options: StoreOptions
        @Argument(help: "The key.") var key: String
        @Flag(help: "Print the value as an XML property list.") var plist = false

        func run() throws {
            try reportingErrors {
                let kv = try options.openKeyValueStore()
                guard let value = kv.value(forKey: key) else {
                    throw CKError(.unknownItem, "no key \"\(key)\" in the key-value store of \(kv.user); `ckfs kv list` shows the keys")
                }
                if plist {
                    FileHandle.standardOutput.write(Data(PropertyListWriter.document(value)))
                } else {
                    print(KeyValueCommand.text(value))
                }
            }
        }
    }
}
