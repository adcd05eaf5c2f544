import ArgumentParser
import CloudStore
import CloudStoreBench
import Foundation

/// Workloads for the process tests (crash and concurrency); hidden from help.
struct DebugCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "debug",
        abstract: "Workloads used by the tests.",
        shouldDisplay: false,
        subcommands: [CrashWriter.self, Counter.self, WriteLoop.self, Fill.self, KeyValueClient.self, KeyValueWriter.self, QueryTiming.self, HTTPFloor.self]
    )
}
