import ArgumentParser
import CloudStore
import Foundation

/// What commands read: JSON from a file or standard input.
enum InputFile {
    /// Reads and parses JSON from a file or `-` (standard input); errors name the place.
    static func readJSON(_ source: String) throws -> JSONValue {
        let data: Data
        if source == "-" {
            data = FileHandle.standardInput.readDataToEndOfFile()
        } else {
            guard let d = FileManager.default.contents(atPath: source) else {
                throw CKError(.invalidArguments, "cannot read \(source): no such file, or not readable")
            }
            data = d
        }
        do {
            return try JSONParser.parse(Array(data))
        } catch {
            throw CKError(.invalidArguments, "\(source == "-" ? "standard input" : source) is not valid JSON at \(error.description)", cause: .syntax(error))
        }
    }
}
