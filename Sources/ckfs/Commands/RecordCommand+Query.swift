import ArgumentParser
import CloudStore
import Foundation

extension RecordCommand {
    struct Query: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "query",
            abstract: "Print the records of a type that match a predicate, and a cursor when more remain.",
            discussion: """
            The predicate is NSPredicate format text as CloudKit accepts it: ==, !=, <, <=, >, >=, \
            BETWEEN {a, b}, IN {a, b}, BEGINSWITH, CONTAINS (lists), self CONTAINS 'word', \
            distanceToLocation:fromLocation:(field, LOCATION(lat, lon)) < metres, AND, NOT, \
            TRUEPREDICATE; dates as CAST(seconds since 2001, "NSDate") or %@ with --arg date:…. \
            Output: {"records": [...], "cursor": "..."}; pass the cursor back with --cursor for the next page.
            """
        )

        @OptionGroup var options: DatabaseOptions
        @Option(help: "The record type.") var type: String
        @Option(help: "The predicate.") var predicate = Request.truePredicate
        @Option(help: "A %@ or %K argument, in order: TYPE:VALUE with TYPE string, int, double, date (YYYY-MM-DDTHH:MM:SSZ), location (lat,lon), reference or key; a bare number is int or double, other text a string.")
        var arg: [String] = []
        @Option(help: "Sort by a field, KEY or KEY:desc, or by distance from a point, KEY@LAT,LON[:desc]; repeat for more keys.")
        var sort: [String] = []
        @Option(help: "At most this many records.") var limit = Request.defaultLimit
        @Option(help: "Continue after this cursor.") var cursor: String?
        @Option(help: "Only these fields, comma-separated.") var keys: String?

        var request: Request {
            Request(database: options.choice, type: type, predicate: predicate, arg: arg, sort: sort, limit: limit, cursor: cursor, keys: keys)
        }

        func validate() throws { try request.validate() }

        func run() throws { try request.run() }

        /// What the command does, from its options' values.
        struct Request: DatabaseRequest {
            static let truePredicate = "TRUEPREDICATE"
            static let defaultLimit = 100

            var database = DatabaseChoice()
            /// Required: the direct reading refuses a command line without `--type`.
            var type = ""
            var predicate = Self.truePredicate
            var arg: [String] = []
            var sort: [String] = []
            var limit = Self.defaultLimit
            var cursor: String?
            var keys: String?

            func validate() throws {
                if limit < 1 { throw ValidationError("--limit must be at least 1") }
                _ = try parsedQuery()
            }

            func parsedQuery() throws -> RecordQuery {
                let args = try arg.map(Query.argument)
                let parsed: QueryPredicate
                do { parsed = try PredicateParser.parse(predicate, arguments: args) } catch {
                    throw ValidationError("--predicate: \(error)")
                }
                return RecordQuery(recordType: type, predicate: parsed, sortDescriptors: try sort.map(Query.sortDescriptor))
            }

            func run() throws {
                try reportingErrors {
                    let db = try database.openDatabase()
                    let desired = keys.map(commaList)
                    let result = try db.query(try parsedQuery(), in: database.zone, limit: limit, cursor: cursor.map(QueryCursor.init(text:)), desiredKeys: desired)
                    var out: [String: JSONValue] = ["records": .array(result.records.map(RecordCoding.encode))]
                    if let next = result.cursor { out["cursor"] = .string(next.text) }
                    Report.printJSON(.object(out))
                }
            }
        }

        /// `KEY`, `KEY:asc`, `KEY:desc`, or `KEY@LAT,LON` with the same suffixes for distance.
        static func sortDescriptor(_ text: String) throws -> QuerySortDescriptor {
            var body = Substring(text)
            var ascending = true
            if let colon = body.lastIndex(of: ":") {
                switch body[body.index(after: colon)...].lowercased() {
                case "asc": ascending = true
                case "desc": ascending = false
                default: throw ValidationError("--sort \(text): the order after ':' is asc or desc")
                }
                body = body[..<colon]
            }
            guard let at = body.firstIndex(of: "@") else {
                guard !body.isEmpty else { throw ValidationError("--sort \(text): no field name") }
                return QuerySortDescriptor(key: String(body), ascending: ascending)
            }
            let key = String(body[..<at])
            let c = body[body.index(after: at)...].split(separator: ",").compactMap { Double($0.trimmingCharacters(in: .whitespaces)) }
            guard !key.isEmpty, c.count == 2, (-90...90).contains(c[0]), (-180...180).contains(c[1]) else {
                throw ValidationError("--sort \(text): a distance sort is written KEY@LAT,LON, such as place@48.85,2.35")
            }
            return QuerySortDescriptor(key: key, relativeLocation: Location(latitude: c[0], longitude: c[1]), ascending: ascending)
        }

        static func argument(_ text: String) throws -> PredicateValue {
            let parts = text.split(separator: ":", maxSplits: 1).map(String.init)
            func bad(_ what: String) -> ValidationError { ValidationError("--arg \(text): \(what)") }
            if parts.count == 2 {
                let v = parts[1]
                // Type names in any case: `STRING:x` is `string:x`, not the text "STRING:x".
                switch parts[0].lowercased() {
                case "string", "key": return .string(v)
                case "int": guard let i = Int64(v) else { throw bad("not a 64-bit integer") }; return .int(i)
                case "double": guard let d = Double(v) else { throw bad("not a number") }; return .double(d)
                case "date":
                    guard let d = PropertyListValue.date(iso8601: v) else { throw bad("a date is written YYYY-MM-DDTHH:MM:SSZ") }
                    return .date(d)
                case "location":
                    let c = v.split(separator: ",").compactMap { Double($0.trimmingCharacters(in: .whitespaces)) }
                    guard c.count == 2 else { throw bad("a location is written lat,lon") }
                    return .location(Location(latitude: c[0], longitude: c[1]))
                case "reference": return .reference(v)
                default: break
                }
            }
            if let i = Int64(text) { return .int(i) }
            if let d = Double(text) { return .double(d) }
            return .string(text)
        }
    }
}

extension RecordCommand.Query: DirectlyParsed {
    static let directPath = ["record", "query"]

    static var directOptions: [DirectOption<Request>] {
        DatabaseChoice.directOptions.map { $0.within(\.database) } + [
            .value("--type", required: true) { $0.type = $1; return true },
            .value("--predicate") { $0.predicate = $1; return true },
            .values("--arg") { $0.arg.append($1); return true },
            .values("--sort") { $0.sort.append($1); return true },
            .value("--limit") { request, word in Int(argument: word).map { request.limit = $0 } != nil },
            .value("--cursor") { $0.cursor = $1; return true },
            .value("--keys") { $0.keys = $1; return true },
        ]
    }

    static var directArgument: ((inout Request, String) -> Bool)? { nil }
}
