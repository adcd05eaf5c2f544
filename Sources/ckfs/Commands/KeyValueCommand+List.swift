import ArgumentParser
import CloudStore
import Foundation

extension KeyValueCommand {
    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "list", abstract: "List the keys with their types and values, one per line.")
        @OptionGroup var options: StoreOptions
        @Flag(help: "Print one JSON object: key → {type, value}.") var json = false

        func run() throws {
            try reportingErrors {
                let entries = try options.openKeyValueStore().entries
                if json {
                    Report.printJSON(.object(entries.mapValues { .object(["type": .string($0.typeName), "value": $0.jsonValue]) }))
                    return
                }
                for key in entries.keys.sorted() {
                    let v = entries[key]!
                    print("\(key)\t\(v.typeName)\t\(JSONWriter.compactString(v.jsonValue))")
                }
            }
        }
    }
}
