import ArgumentParser
import CloudStore
import Foundation

extension KeyValueCommand {
    struct SetKey: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "set", abstract: "Set a key to a value and write it to disk.")
        @OptionGroup var options: StoreOptions
        @Argument(help: "The key.") var key: String
        @Argument(help: "The value, or - to read it from standard input.") var value: String
        @Option(help: "How to read the value: \(ValueType.allCases.map(\.rawValue).joined(separator: ", ")) (json for arrays and dictionaries, plist for an XML property list).")
        var type: ValueType = .string

        func validate() throws {
            // Standard input is read once, in run; text on the command line is checked here.
            if value != "-" { _ = try KeyValueCommand.parse(value, as: type) }
        }

        func run() throws {
            var text = value
            if value == "-" {
                text = String(decoding: FileHandle.standardInput.readDataToEndOfFile(), as: UTF8.self)
                if type != .string && type != .plist { text = text.trimmingCharacters(in: .whitespacesAndNewlines) }
            }
            let parsed = try KeyValueCommand.parse(text, as: type)
            try reportingErrors {
                let kv = try options.openKeyValueStore()
                try kv.setValue(parsed, forKey: key)
                // Another writer's values may have reached the store first and left no room.
                if let dropped = try kv.sync()[key] { throw dropped }
                print("set \(key) (\(parsed.typeName), \(PropertyListWriter.compactSize(parsed)) bytes)")
            }
        }
    }
}
