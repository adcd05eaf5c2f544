import CloudStore
import Foundation

extension Bench {
    /// Row 11: `ckfs export` and `ckfs import` of a zone of `fetchZone` records, each a cold
    /// process as people run them, per record, against `tar` carrying the same store to
    /// another folder and against the sqlite3 shell's `.dump` and `.read` of the same records;
    /// and the peak memory of each, against the sqlite3 shell's.
    func transferRows(executable: String) throws(CKError) -> [Row] {
        guard let sqlite3 = coldTools(forRow: "11") else { return [] }
        let n = sizes.fetchZone
        let db = try store("transfer")
        let sql = try sqlite("transfer")
        try fill(db, sql, count: n)
        progress("filled \(n) records for export and import")
        let base = directory + "/transfer"
        let file = directory + "/transfer.sqlite"
        func sh(_ script: String) -> [String] { ["/bin/sh", "-c", script] }

        // Every copy starts with nothing of another waiting to be written (`sync` first, not
        // timed) and ends durable, as ckfs's does (the baselines end with `sync`). `tar` runs
        // before ckfs and after, and its mean is the baseline, so a file system that grows
        // faster or slower over the row (ext4 without a journal skips inodes freed in the last
        // minutes) favours neither.
        func settled(_ command: [String]) throws(CKError) -> Double {
            _ = try timedRun(sh("sync"), seconds: 3_600)
            return try timedRun(command, seconds: 3_600)
        }
        let tarBefore = try settled(sh("mkdir '\(directory)/tarred' && tar cf - -C '\(directory)' transfer | tar xf - -C '\(directory)/tarred' && sync"))
        let export = try settled([executable, "export", directory + "/exported", "--store", base])
        let dump = try settled(sh("'\(sqlite3)' '\(file)' .dump > '\(directory)/transfer.sql' && sync"))
        let imported = try settled([executable, "import", directory + "/exported", "--store", directory + "/imported"])
        let read = try settled(sh("'\(sqlite3)' '\(directory)/read.sqlite' < '\(directory)/transfer.sql' && sync"))
        let tarAfter = try settled(sh("mkdir '\(directory)/tarred-again' && tar cf - -C '\(directory)' transfer | tar xf - -C '\(directory)/tarred-again' && sync"))
        let tarCopy = (tarBefore + tarAfter) / 2
        progress(String(format: "export %.1f s, import %.1f s; tar copy %.1f s before, %.1f s after; sqlite3 .dump %.1f s, .read %.1f s",
                        export / 1e6, imported / 1e6, tarBefore / 1e6, tarAfter / 1e6, dump / 1e6, read / 1e6))
        // Peak memory: one more run of each, into folders of its own.
        let exportKiB = try peakMemory([executable, "export", directory + "/exported-again", "--store", base])
        let importKiB = try peakMemory([executable, "import", directory + "/exported", "--store", directory + "/imported-again"])
        let dumpKiB = try peakMemory([sqlite3, file, ".output '\(directory)/again.sql'", ".dump"])
        let readKiB = try peakMemory([sqlite3, directory + "/read-again.sqlite", ".read '\(directory)/transfer.sql'"])
        let per = Double(n)
        return [
            Row(id: "11a", name: "ckfs export, a cold process (zone of \(n))", ckfs: export / per,
                baselineName: "tar carrying the store to another folder, then sync", baseline: tarCopy / per),
            Row(id: "11b", name: "ckfs export, a cold process (zone of \(n))", ckfs: export / per,
                baselineName: "the sqlite3 shell's .dump, same records", baseline: dump / per),
            Row(id: "11c", name: "ckfs import into a new store (zone of \(n))", ckfs: imported / per,
                baselineName: "tar carrying the store to another folder, then sync", baseline: tarCopy / per),
            Row(id: "11d", name: "ckfs import into a new store (zone of \(n))", ckfs: imported / per,
                baselineName: "the sqlite3 shell's .read of the dump", baseline: read / per),
            Row(id: "11e", name: "ckfs export peak memory, KiB", ckfs: Double(exportKiB),
                baselineName: "the sqlite3 shell's .dump, KiB", baseline: Double(dumpKiB)),
            Row(id: "11f", name: "ckfs import peak memory, KiB", ckfs: Double(importKiB),
                baselineName: "the sqlite3 shell's .read, KiB", baseline: Double(readKiB)),
        ]
    }
}
