import ArgumentParser
import CloudStore
import CloudStoreBench
import Foundation

struct BenchCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench",
        abstract: "Measure ckfs against SQLite and the disk's fsync floor, in one run, as ratios (above 1.0: ckfs is better)."
    )

    @Flag(help: "A smaller run that finishes within about two minutes.") var quick = false
    @Option(help: "Records in the fetch, query, memory and cold zones, and the last growth size (default 100,000; 20,000 with --quick).") var records: Int?
    @Option(help: "Run only these rows, by id, comma-separated (for example 1,8b or 4a).") var rows: String?
    @Flag(help: "Print the rows as JSON.") var json = false
    @Option(help: "Where to make the stores and SQLite files (removed after); the same file system for both.")
    var directory = "/var/tmp/ckfs-bench-\(ProcessInfo.processInfo.processIdentifier)"

    func validate() throws {
        // Row 4's query asks for 100 records, and one record in twenty matches it.
        if let records, records < 2_000 { throw ValidationError("--records must be at least 2,000: row 4's query asks for 100 records, and one in twenty matches it") }
        if let unknown = selectedRows?.subtracting(Bench.rowIDs).sorted().first {
            throw ValidationError("--rows: no row '\(unknown)'; the rows are \(Bench.rowIDs.joined(separator: ", "))")
        }
    }

    /// This program, for the rows that mount a store and time a CLI fetch.
    static var executable: String {
        (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
    }

    private var selectedRows: Set<String>? {
        rows.map { Set($0.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }) }
    }

    func run() throws {
        var sizes = quick ? Bench.Sizes.quick : Bench.Sizes()
        if let records {
            sizes.fetchZone = records
            sizes.queryRecords = records
            // Row 6 measures growth: a larger zone is one more size to grow to.
            if records > sizes.growth.last ?? 0 { sizes.growth.append(records) }
        }
        // What the bench measures on the way (the fsync floor, the file system's speed, fills)
        // goes to standard error as it happens; standard output and --json get the rows only.
        let json = self.json
        let bench = Bench(directory: directory, sizes: sizes, only: selectedRows, executable: Self.executable) { line in
            if !json { Report.printError("bench: " + line) }
        }
        let rows: [Bench.Row]
        do { rows = try bench.run() } catch { throw Report.failure(error) }
        if json {
            Report.printJSON(.array(rows.map { r in
                .object(["id": .string(r.id), "name": .string(r.name), "unit": .string(r.unit), "ckfs": .double(r.ckfs),
                         "baselineName": .string(r.baselineName), "baseline": .double(r.baseline), "ratio": .double(r.ratio)])
            }))
            return
        }
        print(pad("row", 4) + pad("what", 62) + pad("ckfs", 12) + pad("baseline", 12) + pad("ratio", 7) + "baseline is")
        for r in rows {
            print(pad(r.id, 4) + pad(r.name, 62) + pad(String(format: "%.1f", r.ckfs), 12) + pad(String(format: "%.1f", r.baseline), 12)
                  + pad(String(format: "%.2f", r.ratio), 7) + r.baselineName + (r.unit == "µs/op" ? "" : " (\(r.unit))"))
        }
        print("(µs per operation unless the row says otherwise; ratio = baseline ÷ ckfs, above 1.0 ckfs is better)")
    }

    private func pad(_ s: String, _ width: Int) -> String {
        s.count >= width ? s + " " : s + String(repeating: " ", count: width - s.count)
    }
}
