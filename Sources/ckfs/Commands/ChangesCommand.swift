import ArgumentParser
import CloudStore
import Foundation

struct ChangesCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "changes", abstract: "Print the records saved and deleted in a zone since a change token.")

    @OptionGroup var options: DatabaseOptions

    @Option(help: "The token a previous call printed; none prints every record.")
    var since: String?

    @Option(help: "Stop after about this many changes; moreComing says when more remain.")
    var limit: Int?

    var request: Request { Request(database: options.choice, since: since, limit: limit) }

    func validate() throws { try request.validate() }

    func run() throws { try request.run() }

    /// What the command does, from its options' values.
    struct Request: DatabaseRequest {
        var database = DatabaseChoice()
        var since: String?
        var limit: Int?

        func validate() throws {
            if let l = limit, l < 1 { throw ValidationError("--limit must be at least 1") }
        }

        func run() throws {
            try reportingErrors {
                let db = try database.openDatabase()
                var token: ChangeToken?
                if let since {
                    guard let t = ChangeToken(string: since) else {
                        throw CKError(.invalidArguments, "\"\(since)\" is not a change token; pass the \"token\" a previous `ckfs changes` printed")
                    }
                    token = t
                }
                let changes = try db.changes(in: database.zone, since: token, limit: limit)
                var out: [String: JSONValue] = [
                    "records": .array(changes.changed.map(RecordCoding.encode)),
                    "deleted": .array(changes.deleted.map { .string($0.recordName) }),
                    "token": .string(changes.token.description),
                    "moreComing": .bool(changes.moreComing),
                ]
                if let c = changes.clientChangeToken { out["clientChangeToken"] = .string(String(decoding: c, as: UTF8.self)) }
                Report.printJSON(.object(out))
            }
        }
    }
}

extension ChangesCommand: DirectlyParsed {
    static let directPath = ["changes"]

    static var directOptions: [DirectOption<Request>] {
        DatabaseChoice.directOptions.map { $0.within(\.database) } + [
            .value("--since") { $0.since = $1; return true },
            .value("--limit") { request, word in Int(argument: word).map { request.limit = $0 } != nil },
        ]
    }

    static var directArgument: ((inout Request, String) -> Bool)? { nil }
}
