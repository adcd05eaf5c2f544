import Foundation
import Testing
import TestSupport
@testable import CloudStore

/// `ckfs record query`: records, the cursor to continue, and errors that name the problem.
@Suite struct QueryCLITests {
    /// Each `ckfs record save` is a process that ends without closing the zone's index, and the
    /// next one finds none of the index's WAL in the file: the saves keep the WAL under
    /// ``ZoneIndexFile/walLimit`` and a save's pages, so a cold question reads little of it back
    /// (100 saves left 8 MB, read back by every cold question after).
    @Test func savesInNewProcessesKeepTheIndexWALShort() throws {
        let cli = try CLIFixture()
        let seed = (1...200).map { #"{"recordType":"Item","recordName":"s\#($0)","fields":{"n":\#($0),"kind":"k\#($0 % 5)"}}"# }
        #expect(cli.run(["record", "save"], input: "[" + seed.joined(separator: ",") + "]").status == 0)
        // The zone's index, made by its first query.
        let query = ["record", "query", "--type", "Item", "--predicate", "kind == 'k1'", "--sort", "n:desc", "--limit", "3"]
        #expect(cli.run(query).status == 0)
        let index = try CLIFixture.indexFile(of: cli.store)
        var largest: Int64 = 0
        for i in 0..<120 {
            let saved = cli.run(["record", "save"], input: #"{"recordType":"Item","recordName":"w\#(i)","fields":{"n":\#(1000 + i),"kind":"k1"}}"#)
            #expect(saved.status == 0, "\(saved.stderr)")
            if case .success(let wal?) = Syscall.stat(index + "-wal") { largest = max(largest, wal.size) }
        }
        #expect(largest > 0 && largest < ZoneIndexFile.walLimit + (256 << 10), "the index's WAL reached \(largest) bytes")
        let last = cli.run(query)
        #expect(last.json?["records"]?.arrayValue?.compactMap { $0["recordName"]?.stringValue } == ["w119", "w118", "w117"], "\(last.stdout) \(last.stderr)")
    }

    /// A query whose conditions the index does not all keep, or sorted by distance, still
    /// answers, and the log (standard error) says that it reads records to do so; a query the
    /// index answers alone says nothing.
    @Test func aQueryTheIndexCannotAnswerAloneSaysSo() throws {
        let cli = try CLIFixture()
        let records = (0..<60).map { i in
            #"{"recordType":"Place","recordName":"p\#(i)","fields":{"n":\#(i),"kind":"k\#(i % 3)","at":{"type":"LOCATION","value":{"latitude":\#(Double(i) / 10),"longitude":0}}}}"#
        }
        #expect(cli.run(["record", "save"], input: "[" + records.joined(separator: ",") + "]").status == 0)
        func names(_ r: CLIFixture.Output) -> [String] {
            r.json?["records"]?.arrayValue?.compactMap { $0["recordName"]?.stringValue } ?? []
        }
        let indexed = cli.run(["record", "query", "--type", "Place", "--predicate", "kind == 'k1' AND n < 10", "--sort", "n"])
        #expect(names(indexed) == ["p1", "p4", "p7"], "\(indexed.stdout) \(indexed.stderr)")
        #expect(!indexed.stderr.contains("records are read"), "\(indexed.stderr)")
        let negated = cli.run(["record", "query", "--type", "Place", "--predicate", "NOT kind IN {'k0', 'k2'} AND n < 10", "--sort", "n:desc"])
        #expect(names(negated) == ["p7", "p4", "p1"], "\(negated.stdout) \(negated.stderr)")
        #expect(negated.stderr.contains("query of Place in zone _defaultZone: 1 condition(s) of NOT kind IN"), "\(negated.stderr)")
        #expect(negated.stderr.contains("are not in the index; records are read to test them"), "\(negated.stderr)")
        let near = cli.run(["record", "query", "--type", "Place", "--predicate", "n >= 50", "--sort", "at@5.31,0", "--limit", "3"])
        #expect(names(near) == ["p53", "p54", "p52"], "\(near.stdout) \(near.stderr)")
        #expect(near.stderr.contains("query of Place in zone _defaultZone is sorted by distance, which the index does not keep; the zone's records are read"), "\(near.stderr)")
    }

    @Test func queryPrintsPagesAndACursor() throws {
        let cli = try CLIFixture()
        let records = (1...9).map { #"{"recordType":"Item","recordName":"i\#($0)","fields":{"n":\#($0),"tags":["t\#($0 % 2)"]}}"# }
        #expect(cli.run(["record", "save"], input: "[" + records.joined(separator: ",") + "]").status == 0)
        let first = cli.run(["record", "query", "--type", "Item", "--predicate", "n >= %@ AND tags CONTAINS 't1'", "--arg", "int:3", "--sort", "n:desc", "--limit", "2", "--keys", "n"])
        #expect(first.status == 0, "\(first.stderr)")
        let names = first.json?["records"]?.arrayValue?.compactMap { $0["recordName"]?.stringValue }
        #expect(names == ["i9", "i7"])
        #expect(first.json?["records"]?.arrayValue?.first?["fields"]?["tags"] == nil, "--keys limits the fields")
        let cursor = try #require(first.json?["cursor"]?.stringValue)
        let second = cli.run(["record", "query", "--type", "Item", "--predicate", "n >= %@ AND tags CONTAINS 't1'", "--arg", "int:3", "--sort", "n:desc", "--limit", "2", "--cursor", cursor])
        #expect(second.json?["records"]?.arrayValue?.compactMap { $0["recordName"]?.stringValue } == ["i5", "i3"])
        #expect(second.json?["cursor"] == nil)
        let or = cli.run(["record", "query", "--type", "Item", "--predicate", "n == 1 OR n == 2"])
        #expect(or.status == 64 && or.stderr.contains("at character 8: OR is not supported"), "\(or.stderr)")
        let unknown = cli.run(["record", "query", "--type", "Item", "--predicate", "weight > 1"])
        #expect(unknown.status == 1 && unknown.stderr.contains("invalidArguments: record type Item has no field \"weight\""), "\(unknown.stderr)")
        let reserved = cli.run(["record", "query", "--type", "Item", "--predicate", "size > 1"])
        #expect(reserved.status == 64 && reserved.stderr.contains("write #size"), "\(reserved.stderr)")
        for arg in ["Int:3", "INT:3"] {
            let typed = cli.run(["record", "query", "--type", "Item", "--predicate", "n == %@", "--arg", arg])
            #expect(typed.json?["records"]?.arrayValue?.compactMap { $0["recordName"]?.stringValue } == ["i3"], "\(arg): \(typed.stdout) \(typed.stderr)")
        }
        let wrongCursor = cli.run(["record", "query", "--type", "Item", "--cursor", cursor])
        #expect(wrongCursor.status == 1 && wrongCursor.stderr.contains("cursor"), "\(wrongCursor.stderr)")
    }
}
