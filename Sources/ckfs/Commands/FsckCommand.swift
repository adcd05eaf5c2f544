import ArgumentParser
import CloudStore

struct FsckCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fsck",
        abstract: "Check a store, repair what can be repaired, and say what cannot.",
        discussion: "Replays zone logs, cuts torn log tails, removes temporary files, verifies every record and asset file against the logs and checksums, rebuilds usage, brings each zone's index up to date and compares it with the record files (making it again when it differs or is damaged), checks every key-value store, subscription file and notification log. Warns about files and folders other OS users can reach (ckfs makes them 0600 and 0700). Exits 1 when damage remains, 2 when only a full disk kept it from finishing."
    )

    @OptionGroup var options: DatabaseOptions

    func run() throws {
        try reportingErrors {
            let line = TerminalProgress("checking records")
            let report = try options.openStore().check { p in
                line.update(p.records + p.zoneFilesChecked, detail: "zone \(p.zones + 1): \(p.zoneFilesChecked) of \(p.zoneFiles) record files")
            }
            line.finish()
            for line in report.repaired { print("repaired: \(line)") }
            for line in report.damage { Report.printError("ckfs: damage: \(line)") }
            for line in report.warnings { Report.printError("ckfs: warning: \(line)") }
            for line in report.diskFull { Report.printError("ckfs: disk full: \(line)") }
            if !report.diskFull.isEmpty {
                Report.printError("ckfs: the disk holding the store is full: nothing is damaged, but saves wait in the zone logs for room to be written to their files; free space on the disk and run `ckfs fsck` again")
            }
            print("checked \(report.zones) zones, \(report.records) records, \(report.keyValueKeys) key-value keys, \(report.subscriptions) subscriptions, \(report.notifications) notifications, \(report.users) users: \(report.repaired.count) repaired, \(report.damage.count) damaged")
            if !report.isClean { throw ExitCode(1) }
            if !report.diskFull.isEmpty { throw ExitCode(2) }
        }
    }
}
