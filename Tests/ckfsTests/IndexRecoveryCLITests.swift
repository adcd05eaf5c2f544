import Foundation
import Testing
import TestSupport
@testable import CloudStore

/// A zone's index lost, damaged, or older than its log (a store restored from `cp -a`, `tar` or
/// `rsync`): `ckfs fsck` and every cold question answer as the record files do, read by
/// python3 as an outside reader would.
@Suite struct IndexRecoveryCLITests {
    /// The questions asked of every copy, each with python3's test of a record's fields.
    static let questions: [(predicate: String, sort: String, python: String)] = [
        ("kind == 'k1'", "n:desc", "f.get('kind') == 'k1'"),
        ("n >= 40 AND n < 220", "n", "40 <= f['n'] < 220"),
        ("tags CONTAINS 't2'", "n:desc", "'t2' in f.get('tags', [])"),
        ("NOT kind IN {'k0', 'k2'}", "n", "f.get('kind') not in ('k0', 'k2')"),
    ]

    /// Saves records in batches, with edits and deletes, through new processes; each record
    /// carries `pad` bytes of text, so a small log limit sees compactions.
    static func fill(_ cli: CLIFixture, from first: Int, count: Int, pad: Int = 0) {
        let text = String(repeating: "p", count: pad)
        for start in stride(from: first, to: first + count, by: 100) {
            let batch = (start..<min(start + 100, first + count)).map { i in
                #"{"recordType":"Item","recordName":"r\#(i)","fields":{"n":\#(i),"kind":"k\#(i % 4)","tags":["t\#(i % 3)","u"],"pad":"\#(text)"}}"#
            }
            let saved = cli.run(["record", "save"], input: "[" + batch.joined(separator: ",") + "]")
            #expect(saved.status == 0, "\(saved.stderr)")
        }
        // An edit that moves a record out of `kind == 'k1'`, and a delete.
        let edited = cli.run(["record", "save", "--policy", "changed-keys"],
                             input: #"{"recordType":"Item","recordName":"r\#(first + 1)","fields":{"kind":"k9"}}"#)
        #expect(edited.status == 0, "\(edited.stderr)")
        #expect(cli.run(["record", "delete", "r\(first + 5)"]).status == 0)
    }

    /// What the record files of `store`'s default zone say: each question's names in its order,
    /// and every name, from python3 reading the JSON files.
    static func truth(_ store: String) throws -> [String: [String]] {
        let tests = questions.enumerated().map { i, q in
            let (key, descending) = q.sort.hasSuffix(":desc") ? (String(q.sort.dropLast(5)), "True") : (q.sort, "False")
            return "    '\(i)': sorted([r for r in records if (lambda f: \(q.python))(r)], key=lambda f: f['\(key)'], reverse=\(descending)),"
        }.joined(separator: "\n")
        let script = """
        import glob, json, sys
        records = []
        for path in glob.glob(sys.argv[1] + '/*/development/private/*/zones/_defaultZone/records/*.json'):
            with open(path) as f:
                r = json.load(f)
            fields = {k: v['value'] for k, v in r['fields'].items()}
            fields['recordName'] = r['recordName']
            records.append(fields)
        answers = {
        \(tests)
        }
        out = {k: [r['recordName'] for r in v] for k, v in answers.items()}
        out['all'] = sorted(r['recordName'] for r in records)
        print(json.dumps(out))
        """
        let r = CLIFixture.exec("/usr/bin/env", ["python3", "-c", script, store])
        guard r.status == 0, case .object(let answers)? = try? JSONParser.parse(r.stdout) else {
            throw CKError(.internalError, "python3 failed: \(r.stderr)")
        }
        return answers.mapValues { $0.arrayValue?.compactMap(\.stringValue) ?? [] }
    }

    /// Asks the questions numbered `asked` of `cli`'s store in new processes (queries in pages
    /// of 40 through their cursors, then, with `changes`, a first change fetch in pages of 40)
    /// and expects the files' answers; `when` names the case. The queries must not have left
    /// the index (no line saying it cannot be used).
    static func expectAnswersMatch(_ cli: CLIFixture, _ when: String, asking asked: [Int] = Array(questions.indices), changes: Bool = true,
                                   sourceLocation: SourceLocation = #_sourceLocation) throws {
        let truth = try truth(cli.store)
        #expect((truth["all"]?.count ?? 0) > 100, "\(when): python3 read the records", sourceLocation: sourceLocation)
        for i in asked {
            let q = questions[i]
            var names: [String] = []
            var cursor: String?
            repeat {
                let r = cli.run(["record", "query", "--type", "Item", "--predicate", q.predicate, "--sort", q.sort, "--limit", "40", "--keys", "n"]
                                + (cursor.map { ["--cursor", $0] } ?? []))
                try #require(r.status == 0, "\(when): \(q.predicate): \(r.stderr)", sourceLocation: sourceLocation)
                #expect(!r.stderr.contains("cannot be used"), "\(when): \(r.stderr)", sourceLocation: sourceLocation)
                names += r.json?["records"]?.arrayValue?.compactMap { $0["recordName"]?.stringValue } ?? []
                cursor = r.json?["cursor"]?.stringValue
            } while cursor != nil && names.count <= 1_000
            #expect(names == truth["\(i)"], "\(when): \(q.predicate) sorted by \(q.sort)", sourceLocation: sourceLocation)
        }
        guard changes else { return }
        var changed: [String] = []
        var token: String?
        var more = true
        while more, changed.count <= 1_000 {
            let r = cli.run(["changes", "--limit", "40"] + (token.map { ["--since", $0] } ?? []))
            try #require(r.status == 0, "\(when): changes: \(r.stderr)", sourceLocation: sourceLocation)
            changed += r.json?["records"]?.arrayValue?.compactMap { $0["recordName"]?.stringValue } ?? []
            token = r.json?["token"]?.stringValue
            more = r.json?["moreComing"] == .bool(true)
        }
        #expect(changed.sorted() == truth["all"], "\(when): a first change fetch", sourceLocation: sourceLocation)
    }

    static func removeIndex(_ path: String) {
        for suffix in ["", "-wal", "-shm"] { unlink(path + suffix) }
    }

    /// Puts the index at `source` (its file and WAL) in place of the one at `path`.
    static func replaceIndex(_ path: String, with source: String) {
        removeIndex(path)
        for suffix in ["", "-wal"] { _ = try? FileManager.default.copyItem(atPath: source + suffix, toPath: path + suffix) }
    }

    /// `ckfs fsck`, expected to exit 0; its standard output.
    static func fsck(_ cli: CLIFixture, _ when: String, sourceLocation: SourceLocation = #_sourceLocation) -> String {
        let r = cli.run(["fsck"])
        #expect(r.status == 0, "\(when): fsck: \(r.stdout) \(r.stderr)", sourceLocation: sourceLocation)
        return r.stdout
    }

    @Test func fsckMakesAMissingDamagedOrOlderIndexAgain() throws {
        let cli = try CLIFixture()
        Self.fill(cli, from: 0, count: 300)
        try Self.expectAnswersMatch(cli, "made by the first query")
        let path = try CLIFixture.indexFile(of: cli.store)
        let older = cli.store + "-older-index"
        defer { Self.removeIndex(older) }
        Self.replaceIndex(older, with: path)
        Self.fill(cli, from: 300, count: 150)

        // Deleted: fsck makes it, and has nothing to repair (an index is derived data).
        Self.removeIndex(path)
        var out = Self.fsck(cli, "index deleted")
        #expect(!out.contains("repaired:"), "\(out)")
        #expect(FileManager.default.fileExists(atPath: path), "fsck made the index")
        try Self.expectAnswersMatch(cli, "after fsck made a deleted index")

        // Truncated to half, then garbage: fsck says it was damaged and makes it again. (Its
        // pages are moved from the WAL into the file first, by python3's sqlite3, as a copy
        // made after a checkpoint holds them.)
        let checkpoint = CLIFixture.exec("/usr/bin/env", ["python3", "-c", "import sqlite3, sys; sqlite3.connect(sys.argv[1]).execute('PRAGMA wal_checkpoint(TRUNCATE)')", path])
        #expect(checkpoint.status == 0, "\(checkpoint.stderr)")
        let st = try #require(try Syscall.stat(path).get())
        #expect(st.size > 100_000 && truncate(path, off_t(st.size / 2)) == 0, "\(st.size) bytes")
        unlink(path + "-wal")
        out = Self.fsck(cli, "index truncated")
        #expect(out.contains("repaired: zone _defaultZone: its index (index.sqlite) was damaged"), "\(out)")
        try Self.expectAnswersMatch(cli, "after fsck made a truncated index again")
        Self.removeIndex(path)
        try Data(repeating: 0x42, count: 50_000).write(to: URL(fileURLWithPath: path))
        out = Self.fsck(cli, "index garbage")
        #expect(out.contains("repaired: zone _defaultZone: its index (index.sqlite) was damaged"), "\(out)")
        out = Self.fsck(cli, "after the repair")
        #expect(!out.contains("repaired:"), "a second fsck finds nothing to repair: \(out)")
        try Self.expectAnswersMatch(cli, "after fsck made a garbage index again")

        // From before the last 150 saves: brought up to date from the log.
        Self.replaceIndex(path, with: older)
        out = Self.fsck(cli, "older index")
        #expect(!out.contains("repaired:"), "\(out)")
        try Self.expectAnswersMatch(cli, "after fsck took an older index up to the log")

        // Pages overwritten past the state's, where SQLite finds the damage only when a question
        // reads them: the queries and change fetches answer rightly all the same (the index is
        // made again), and so does fsck, which reads every row.
        try Self.overwritePages(path)
        try Self.expectAnswersMatch(cli, "with pages overwritten")
        out = Self.fsck(cli, "after the queries made the index again")
        #expect(!out.contains("repaired:"), "\(out)")
        try Self.overwritePages(path)
        out = Self.fsck(cli, "pages overwritten")
        #expect(out.contains("repaired: zone _defaultZone: its index (index.sqlite) was damaged"), "\(out)")
        try Self.expectAnswersMatch(cli, "after fsck made an index with overwritten pages again")
    }

    /// Moves the index's WAL into its file (python3's sqlite3) and writes garbage over every
    /// page after the sixth, leaving the schema (page 1) and the state (page 2) as they were:
    /// the records' and fields' rows are past them.
    static func overwritePages(_ path: String) throws {
        let script = """
        import sqlite3, sys, os
        db = sqlite3.connect(sys.argv[1])
        db.execute('PRAGMA wal_checkpoint(TRUNCATE)').fetchall()
        assert db.execute("select rootpage from sqlite_schema where name = 'state'").fetchone()[0] <= 6
        db.close()
        size = os.path.getsize(sys.argv[1])
        assert size > 20 * 4096, size
        with open(sys.argv[1], 'r+b') as f:
            f.seek(6 * 4096)
            f.write(b'B' * (size - 6 * 4096))
        """
        let r = CLIFixture.exec("/usr/bin/env", ["python3", "-c", script, path])
        #expect(r.status == 0, "\(r.stderr)")
    }

    /// A cold query killed with SIGKILL at random moments while it makes the zone's index from
    /// the records (a store restored without one): the next process finds the index whole, empty
    /// or half made in a transaction SQLite rolls back, and answers as the files do; `ckfs fsck`
    /// compares the index with every record file and finds nothing to repair.
    @Test func aQueryKilledWhileItMakesTheIndexLeavesNoWrongAnswer() throws {
        let cli = try CLIFixture()
        Self.fill(cli, from: 0, count: 4_000, pad: 100)
        let query = ["record", "query", "--type", "Item", "--predicate", Self.questions[1].predicate, "--sort", Self.questions[1].sort]
        #expect(cli.run(query).status == 0)
        let path = try CLIFixture.indexFile(of: cli.store)
        // How long this machine takes to make the index, from its file's appearing to the
        // answer: the kills land at random moments within the first 90% of that span.
        Self.removeIndex(path)
        let making = try cli.microsecondsAfterCreating(path, by: query)
        #expect(making > 0)
        var rng = SystemRandomNumberGenerator()
        var killedMidWork = 0
        for round in 0..<6 {
            Self.removeIndex(path)
            let printed = try cli.runKilled(query, afterCreating: path, then: UInt32.random(in: 0...(making / 10 * 9), using: &rng))
            // Killed before it answered, with the index file made: while it filled the index.
            if printed.isEmpty, FileManager.default.fileExists(atPath: path) { killedMidWork += 1 }
            try Self.expectAnswersMatch(cli, "round \(round), after the kill", asking: [1], changes: false)
            let out = Self.fsck(cli, "round \(round)")
            #expect(!out.contains("repaired:"), "round \(round): \(out)")
        }
        print("index kill test: \(killedMidWork) of 6 kills landed while the index was made (\(making) µs)")
        #expect(killedMidWork >= 2, "the kills landed while the index was made in \(killedMidWork) rounds of 6 (making it took \(making) µs)")
    }

    /// A store copied whole with `cp -a`, with `tar` leaving the index out, and with `rsync`
    /// given the index of an earlier copy, whose log has been compacted since: each restored
    /// copy checks clean, answers as its files do, holds what the store held, and takes saves.
    @Test func backupsByCpTarAndRsyncAnswerAsTheirRecords() throws {
        // A small log limit, so that the earlier copy's index is older than the log reaches back.
        let cli = try CLIFixture(initArgs: ["--compact-log-bytes", "65536"])
        Self.fill(cli, from: 0, count: 200, pad: 200)
        try Self.expectAnswersMatch(cli, "the store, first")
        let earlier = cli.store + "-earlier"
        defer { try? FileManager.default.removeItem(atPath: earlier) }
        #expect(CLIFixture.exec("/bin/cp", ["-a", cli.store, earlier]).status == 0)
        Self.fill(cli, from: 200, count: 400, pad: 200)
        let held = try Self.truth(cli.store)

        let restored = ["cp", "tar", "rsync"].map { cli.store + "-restored-" + $0 }
        defer { for r in restored { try? FileManager.default.removeItem(atPath: r) } }
        let archive = cli.store + ".tar"
        defer { unlink(archive) }
        #expect(CLIFixture.exec("/bin/cp", ["-a", cli.store, restored[0]]).status == 0)
        let tar = CLIFixture.exec("/bin/tar", ["-C", cli.store, "--exclude", "index.sqlite*", "-cf", archive, "."])
        #expect(tar.status == 0, "\(tar.stderr)")
        #expect(mkdir(restored[1], 0o700) == 0)
        #expect(CLIFixture.exec("/bin/tar", ["-C", restored[1], "-xf", archive]).status == 0)
        let rsync = CLIFixture.exec("/usr/bin/rsync", ["-a", cli.store + "/", restored[2] + "/"])
        #expect(rsync.status == 0, "\(rsync.stderr)")
        let oldIndex = try CLIFixture.indexFile(of: earlier)
        let rsyncIndex = try CLIFixture.indexFile(of: restored[2])
        Self.replaceIndex(rsyncIndex, with: oldIndex)
        // python3 reads the earlier index's last entry (SQLite) and the log's first (JSON):
        // the log was compacted past it, so the index is rebuilt, not caught up.
        let reach = CLIFixture.exec("/usr/bin/env", ["python3", "-c", """
            import json, sqlite3, sys
            applied = sqlite3.connect(sys.argv[1]).execute('select applied from state').fetchone()[0]
            with open(sys.argv[2]) as f:
                first = json.loads(f.readline())['body']['seq']
            print(applied, first)
            """, rsyncIndex, (rsyncIndex as NSString).deletingLastPathComponent + "/log.jsonl"])
        let numbers = reach.stdout.split(separator: " ").compactMap { Int($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
        #expect(numbers.count == 2 && numbers[0] + 1 < numbers[1], "the earlier index holds up to entry \(numbers.first ?? -1), the log starts at \(numbers.last ?? -1): \(reach.stderr)")
        let tarFiles = FileManager.default.enumerator(atPath: restored[1])?.compactMap { $0 as? String } ?? []
        #expect(!tarFiles.isEmpty && !tarFiles.contains { $0.contains("index.sqlite") }, "tar left the index out")

        for (how, copy) in zip(["cp -a", "tar without the index", "rsync with an older index"], restored) {
            let restoredCLI = CLIFixture(adopting: copy)
            #expect(try Self.truth(copy) == held, "\(how): the copy holds what the store held")
            try Self.expectAnswersMatch(restoredCLI, how)
            let out = Self.fsck(restoredCLI, how)
            #expect(!out.contains("repaired:"), "\(how): \(out)")
            let saved = restoredCLI.run(["record", "save"], input: #"{"recordType":"Item","recordName":"after","fields":{"n":100000,"kind":"k1","tags":["t2"]}}"#)
            #expect(saved.status == 0, "\(how): \(saved.stderr)")
            try Self.expectAnswersMatch(restoredCLI, "\(how), after a save")
        }
    }
}
