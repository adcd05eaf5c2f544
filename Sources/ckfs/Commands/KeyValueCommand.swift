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
