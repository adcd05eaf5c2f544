import CloudStore
import Foundation

// Row 10: a new process answers one question about a zone of `fetchZone` records, as a script
// or a shell user asks it: `ckfs` against the sqlite3 shell on the same records (indexes on
// (kind, created) and (score, created), rowid order standing for change order), each with its
// index made. Each is the median wall time of whole runs, process start included, the two
// programs taking turns; row 10e is that start alone, rows 10f-10i the peak memory of the
// questions of 10a-10d, row 10j the query of 10d on a store without an index (which it makes
// first), row 10k a query of a value no record has (a walk in sort order that does not stop
// would read the whole zone), and row 10l a query without conditions, sorted (the newest
// records first: a plan that sorts the whole type at every page shows there).
extension Bench {
    /// The tools row 10 needs, or what is missing.
    static func coldRowsMissing() -> String? {
        if !commandExists("sqlite3") { return "the sqlite3 shell (apt-get install sqlite3)" }
        return FileManager.default.isExecutableFile(atPath: "/usr/bin/time") ? nil : "GNU time (apt-get install time)"
    }

    /// The sqlite3 shell, when the rows of group `row` can run (it and GNU time are here);
    /// nil, with a line saying what to install, when not.
    func coldTools(forRow row: String) -> String? {
        if let missing = Self.coldRowsMissing() {
            progress("row \(row) needs \(missing); scripts/bootstrap --test installs it. Row \(row) is left out.")
            return nil
        }
        return Self.commandPath("sqlite3")
    }

    func coldRows(executable: String) throws(CKError) -> [Row] {
        guard let sqlite3 = coldTools(forRow: "10") else { return [] }
        let n = sizes.fetchZone
        let db = try store("cold")
        let sql = try sqlite("cold")
        try fill(db, sql, count: n)
        try sql.execute("CREATE INDEX by_kind_created ON records (kind, created)")
        try sql.execute("CREATE INDEX by_score_created ON records (score, created)")
        try sql.execute("CREATE INDEX by_created ON records (created)")
        // Ten single saves after a token: what `changes --since` then gives.
        let token = try db.currentChangeToken()
        guard let lastRow = try sql.prepare("SELECT max(rowid) FROM records").rows().first.flatMap({ Int(String(decoding: $0, as: UTF8.self)) }) else {
            throw CKError(.internalError, "SQLite gave no last row")
        }
        let zone = db.zoneID(ZoneID.defaultZoneName)
        let replace = try sql.prepare("INSERT OR REPLACE INTO records VALUES (?, ?, ?, ?, ?)")
        for i in 0..<10 {
            let r = Self.record(i * 97, zone: zone)
            try db.save(r, policy: .allKeys)
            try replace.run(Self.values(r))
        }
        progress("filled \(n) records for cold processes")

        let store = ["--store", directory + "/cold"]
        let file = directory + "/cold.sqlite"
        let name = "item-\(n / 2)"
        // Each with the row of its peak memory, if it has one.
        let cases: [(id: String, what: String, ckfs: [String], sqlite: String, memoryID: String?)] = [
            ("10a", "changes --since T --limit 10", ["changes", "--since", token.description, "--limit", "10"] + store,
             "SELECT json FROM records WHERE rowid > \(lastRow) ORDER BY rowid LIMIT 10", "10f"),
            ("10b", "changes --limit 10 (first page)", ["changes", "--limit", "10"] + store, "SELECT json FROM records ORDER BY name LIMIT 10", "10g"),
            ("10c", "record fetch", ["record", "fetch", name] + store, "SELECT json FROM records WHERE name = '\(name)'", "10h"),
            ("10d", "query kind == k3 by created, 5", ["record", "query", "--type", "Item", "--predicate", "kind == 'k3'", "--sort", "created:desc", "--limit", "5"] + store,
             "SELECT json FROM records WHERE kind = 'k3' ORDER BY created DESC LIMIT 5", "10i"),
            ("10e", "process start (--version; select 1)", ["--version"], "SELECT 1", nil),
            ("10k", "query score == 5000 (no record) by created, 5",
             ["record", "query", "--type", "Item", "--predicate", "score == 5000", "--sort", "created:desc", "--limit", "5"] + store,
             "SELECT json FROM records WHERE score = 5000 ORDER BY created DESC LIMIT 5", nil),
            ("10l", "query of every Item by created, 5",
             ["record", "query", "--type", "Item", "--sort", "created:desc", "--limit", "5"] + store,
             "SELECT json FROM records ORDER BY created DESC LIMIT 5", nil),
        ]
        // The zone's index is made before the clock, as a zone that was ever queried, mounted
        // or served has one (10j measures a first question without it).
        _ = try timedRun([executable] + cases[3].ckfs, seconds: 1_800)
        var rows: [Row] = []
        var memoryRows: [Row] = []
        for c in cases {
            let (ours, theirs) = try coldRuns([executable] + c.ckfs, against: [sqlite3, file, c.sqlite])
            progress(String(format: "cold %@: ckfs %.1f ms, sqlite3 %.1f ms; peak memory %d and %d KiB", c.what, ours.time / 1e3, theirs.time / 1e3, ours.peakKiB, theirs.peakKiB))
            rows.append(Row(id: c.id, name: "cold process: \(c.what) (zone of \(n))", ckfs: ours.time, baselineName: "the sqlite3 shell, same records", baseline: theirs.time))
            // Peak memory of the questions of 10a-10d: rows 10f-10i.
            if let id = c.memoryID {
                memoryRows.append(Row(id: id, name: "cold process peak memory, KiB: \(c.what)", ckfs: Double(ours.peakKiB),
                                      baselineName: "the sqlite3 shell's peak memory, KiB", baseline: Double(theirs.peakKiB)))
            }
        }
        // 10j: what the first cold question pays on a store with no index (made from the
        // records), against the sqlite3 shell making an index of the same records.
        let queryCase = cases[3]
        for suffix in ["", "-wal", "-shm"] { _ = Syscall.unlink(StoreLayout.indexFile(Self.defaultZoneDirectory(db)) + suffix) }
        let making = try timedRun([executable] + queryCase.ckfs, seconds: 1_800)
        let theirs = try timedRun([sqlite3, file, "CREATE INDEX probe ON records (kind, created, name); DROP INDEX probe;"], seconds: 1_800)
        progress(String(format: "cold query with no index (makes it): ckfs %.1f ms; sqlite3 CREATE INDEX %.1f ms", making / 1e3, theirs / 1e3))
        let makeRow = Row(id: "10j", name: "cold process: \(queryCase.what), making the index first (zone of \(n))", ckfs: making,
                          baselineName: "the sqlite3 shell making an index on (kind, created, name)", baseline: theirs)
        // In the order of the rows' ids, where 10k and 10l come last.
        let last: Set<String> = ["10k", "10l"]
        return rows.filter { !last.contains($0.id) } + memoryRows + [makeRow] + rows.filter { last.contains($0.id) }
    }

    /// The default zone's folder of `db` in the file layout, whose index file row 10j removes.
    static func defaultZoneDirectory(_ db: Database) -> String {
        let database = db.store.layout.databaseDirectory(db.container.identifier, db.environment, db.scope, user: db.ownerName)
        return StoreLayout.zoneDirectory(database, zone: ZoneID.defaultZoneName)
    }

    /// The median wall times of running `ours` and `theirs` to their ends, in µs, and their
    /// peak memory. They run in turns, after one run of each not counted, so that both see the
    /// machine alike (a VM's speed drifts from one second to the next); fails when a run fails
    /// or takes more than a minute.
    private func coldRuns(_ ours: [String], against theirs: [String]) throws(CKError)
        -> (ours: (time: Double, peakKiB: Int), theirs: (time: Double, peakKiB: Int)) {
        var samples: ([Double], [Double]) = ([], [])
        for run in 0...sizes.coldRuns {
            let (a, b) = (try timedRun(ours, seconds: 60), try timedRun(theirs, seconds: 60))
            if run > 0 {
                samples.0.append(a)
                samples.1.append(b)
            }
        }
        return ((Self.median(samples.0), try peakMemory(ours)), (Self.median(samples.1), try peakMemory(theirs)))
    }

    /// The wall time of running `command` once to its end, in µs; fails when it fails or runs
    /// longer than `seconds`.
    func timedRun(_ command: [String], seconds: Int) throws(CKError) -> Double {
        let errors = directory + "/cold.err"
        // A run's standard error alone: the file is opened for appending.
        _ = Syscall.unlink(errors)
        let start = DispatchTime.now().uptimeNanoseconds
        let pid = try Syscall.spawn(command[0], arguments: command,
                                    environment: ProcessInfo.processInfo.environment,
                                    files: .init(output: "/dev/null", error: errors))
            .orThrow(.internalError, "cannot start \(command[0])")
        // A blocking wait keeps the clock exact; a watchdog ends a run that hangs.
        let watchdog = DispatchWorkItem { Syscall.signal(pid, Posix.SIGKILL) }
        DispatchQueue.global().asyncAfter(deadline: .now() + .seconds(seconds), execute: watchdog)
        let status = try Syscall.waitForExit(pid).orThrow(.internalError, "cannot wait for \(command[0])")
        watchdog.cancel()
        let elapsed = DispatchTime.now().uptimeNanoseconds - start
        guard status == 0 else {
            let said = (try? String(contentsOfFile: errors, encoding: .utf8)) ?? ""
            let hung = elapsed >= UInt64(seconds) * 1_000_000_000 ? " (killed: it ran for \(seconds) s)" : ""
            throw CKError(.internalError, "\(command.joined(separator: " ")) ended with status \(status)\(hung): \(said.suffix(2000))")
        }
        return Double(elapsed) / 1e3
    }

    /// The peak resident memory of one more run of `command`, in KiB, as GNU time reports it
    /// (`wait4`'s figure would keep this process's own peak across the spawn's exec).
    func peakMemory(_ command: [String]) throws(CKError) -> Int {
        let report = directory + "/cold.rss"
        let pid = try Syscall.spawn("/usr/bin/time", arguments: ["/usr/bin/time", "-f", "%M", "-o", report] + command,
                                    environment: ProcessInfo.processInfo.environment,
                                    files: .init(output: "/dev/null", error: "/dev/null"))
            .orThrow(.internalError, "cannot start /usr/bin/time")
        let status = try Syscall.waitForExit(pid).orThrow(.internalError, "cannot wait for /usr/bin/time")
        guard status == 0, let text = try? String(contentsOfFile: report, encoding: .utf8),
              let kib = Int(text.trimmingCharacters(in: .whitespacesAndNewlines).split(separator: "\n").last ?? "") else {
            throw CKError(.internalError, "\(command.joined(separator: " ")) under /usr/bin/time failed with \(status); is GNU time installed (apt-get install time)?")
        }
        return kib
    }
}
