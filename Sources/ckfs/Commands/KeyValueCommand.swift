import ArgumentParser
import CloudStore
import Foundation

struct KeyValueCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "kv",
        abstract: "Read and write the key-value store of a user.",
        discussion: """
        Keys have at most 64 bytes of UTF-8; a store holds at most 1024 keys; a value, and all \
        values together, at most 1 MB measured as compact XML property-list text.
        """,
        subcommands: [Get.self, SetKey.self, Remove.self, List.self]
    )

    /// The type `set` reads its text as.
    enum ValueType: String, ExpressibleByArgument, CaseIterable {
        case string, int, double, bool, date, data, json, plist
    }
}

extension StoreOptions {
    /// A client that syncs only when told, failing at once when the store cannot be read.
    func openKeyValueStore() throws -> KeyValueStore {
        let kv = try KeyValueStore(store: openStore(), containerIdentifier: container, caller: caller,
                                   environment: environment, synchronizeEvery: nil)
        if let error = kv.lastError { throw error }
        return kv
    }
}

extension KeyValueCommand {
    struct Get: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Print the value of a key.")
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

    struct Remove: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Remove a key and write the change to disk.")
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

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the keys with their types and values, one per line.")
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

    /// How `get` prints a value: text as it is, numbers and dates as text, data as base64,
    /// arrays and dictionaries as JSON.
    static func text(_ value: PropertyListValue) -> String {
        switch value {
        case .string(let s): s
        case .array, .dictionary: JSONWriter.prettyString(value.jsonValue).trimmingCharacters(in: .newlines)
        default:
            if case .string(let s) = value.jsonValue { s } else { JSONWriter.compactString(value.jsonValue) }
        }
    }

    static func parse(_ text: String, as type: ValueType) throws -> PropertyListValue {
        func bad(_ what: String) -> ValidationError { ValidationError("--type \(type.rawValue): \(what)") }
        switch type {
        case .string: return .string(text)
        case .int:
            guard let i = Int64(text) else { throw bad("\"\(text.prefix(40))\" is not a 64-bit integer") }
            return .integer(i)
        case .double:
            guard let d = Double(text) else { throw bad("\"\(text.prefix(40))\" is not a number") }
            return .real(d)
        case .bool:
            switch text.lowercased() {
            case "true", "yes", "1": return .bool(true)
            case "false", "no", "0": return .bool(false)
            default: throw bad("\"\(text.prefix(40))\" is not true or false")
            }
        case .date:
            guard let d = PropertyListValue.date(iso8601: text) else { throw bad("\"\(text.prefix(40))\" is not a date written YYYY-MM-DDTHH:MM:SSZ (UTC)") }
            return .date(d)
        case .data:
            guard let d = Data(base64Encoded: text) else { throw bad("the value is not base64 text") }
            return .data(Array(d))
        case .json:
            do { return try PropertyListValue(json: try JSONParser.parse(text)) } catch let e as JSONParser.SyntaxError {
                throw bad("not valid JSON at \(e)")
            } catch let e as CKError {
                throw bad(e.message)
            }
        case .plist:
            do { return try PropertyListParser.parse(Array(text.utf8)) } catch { throw bad("not a valid XML property list at \(error)") }
        }
    }
}
