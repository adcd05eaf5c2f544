import ArgumentParser
import CloudStore
import Foundation

/// The one place CLI errors become output and exit codes: a line on stderr naming the
/// CloudKit code, the item and the fix; one line per failed item of a partial failure.
enum Report {
    static func failure(_ error: CKError) -> ExitCode {
        if let items = error.partialErrors, !items.isEmpty {
            printError("ckfs: \(error.code.name): \(error.message)")
            for (item, e) in items.sorted(by: { $0.key.description < $1.key.description }) {
                printError("ckfs: \(e.code.name): \(item): \(e.message)")
            }
        } else {
            printError("ckfs: \(error)")
        }
        return ExitCode(1)
    }

    static func printError(_ line: String) {
        writeToStandardError(line + "\n")
    }

    static func printJSON(_ value: JSONValue) {
        FileHandle.standardOutput.write(Data(JSONWriter.pretty(value)))
    }

    /// Saves stood but their notifications could not be sent.
    static func warnings(_ result: ModifyResult) {
        for e in result.notificationErrors {
            printError("ckfs: warning: the changes were saved, but subscribers were not notified: \(e)")
        }
    }
}

/// The items of an option written `a,b,c`, without the spaces around them.
func commaList(_ text: String) -> [String] {
    text.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
}

/// Runs a command body, turning a ``CKError`` into the reported exit.
func reportingErrors(_ body: () throws -> Void) throws {
    do {
        try body()
    } catch let error as CKError {
        throw Report.failure(error)
    }
}
