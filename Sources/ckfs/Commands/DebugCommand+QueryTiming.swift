import ArgumentParser
import CloudStore
import Foundation

extension DebugCommand {
    /// Fills a zone with N records (unless it has them) and times queries on it: the first in
    /// a fresh process (which loads the zone), then typical ones, then one after another
    /// process's save (which the shared catalog picks up from the zone's log).
    struct QueryTiming: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "query-timing", abstract: "Time queries on a zone of many records.")
        @OptionGroup var options: DatabaseOptions
        @Option(help: "Records in the zone.") var records = 100_000
        @Option(help: "Typical queries to time.") var queries = 20

        func run() throws {
            try reportingErrors {
                let db = try options.openDatabase()
                let zone = options.zone
                if (try? db.record(for: RecordID(recordName: String(format: "q%06d", records - 1), zoneID: db.zoneID(zone)))) == nil {
                    let started = Date()
                    var batch: [Record] = []
                    for i in 0..<records {
                        batch.append(Record(recordType: "Item", recordID: RecordID(recordName: String(format: "q%06d", i), zoneID: db.zoneID(zone)),
                                            fields: ["n": .int64(Int64(i % 1000)), "title": .string("item \(i) \(["red", "green", "blue"][i % 3])"),
                                                     "score": .double(Double(i % 977) / 7)]))
                        if batch.count == 400 || i == records - 1 {
                            let r = try db.modify(saving: batch, options: ModifyOptions(savePolicy: .allKeys))
                            if let e = r.error { throw e }
                            batch = []
                        }
                    }
                    print("filled \(records) records in \(ms(Date().timeIntervalSince(started))) ms")
                }
                func time(_ label: String, _ q: RecordQuery, limit: Int = 100) throws {
                    let t0 = Date()
                    let r = try db.query(q, in: zone, limit: limit)
                    print("\(label): \(ms(Date().timeIntervalSince(t0))) ms, \(r.records.count) records")
                }
                let typical = RecordQuery(recordType: "Item", predicate: try PredicateParser.parse("n == 500 AND title BEGINSWITH 'item'"),
                                          sortDescriptors: [QuerySortDescriptor(key: "score", ascending: false)])
                try time("first query (loads the zone)", typical)
                var total = 0.0
                for _ in 0..<queries {
                    let t0 = Date()
                    _ = try db.query(typical, in: zone, limit: 100)
                    total += Date().timeIntervalSince(t0)
                }
                print("typical query (n == 500 AND title BEGINSWITH, sorted by score, 100 matches): \(ms(total / Double(queries))) ms on average over \(queries)")
                try time("sorted page of all records (limit 100)", RecordQuery(recordType: "Item", sortDescriptors: [QuerySortDescriptor(key: "score")]))
                try time("token search (self CONTAINS 'green')", RecordQuery(recordType: "Item", predicate: try PredicateParser.parse("self CONTAINS 'green'")))
                let other = try Store.open(at: options.storePath).container(options.container)
                    .database(options.database, caller: options.place.caller, environment: options.environment)
                try other.save(Record(recordType: "Item", recordID: RecordID(recordName: "late", zoneID: db.zoneID(zone)), fields: ["n": .int64(500), "title": .string("item late")]), policy: .allKeys)
                try time("query after another store object's save", typical, limit: 1000)
            }
        }

        private func ms(_ seconds: Double) -> String { String(format: "%.2f", seconds * 1000) }
    }
}
