import ArgumentParser
import CloudStore
import Foundation

extension DebugCommand {
    /// Sets `counter` = N and `k<N % 100>` = N, syncs, and prints `synced N`, forever: after
    /// a SIGKILL every printed N must be on disk.
    struct KeyValueWriter: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "kv-writer", abstract: "Write and sync numbered values until killed.")
        @OptionGroup var options: StoreOptions

        func run() throws {
            try reportingErrors {
                let kv = try options.openKeyValueStore()
                var n: Int64 = 1
                if case .integer(let last)? = kv.value(forKey: "counter") { n = last + 1 }
                while true {
                    try kv.setValue(.integer(n), forKey: "counter")
                    try kv.setValue(.integer(n), forKey: "k\(n % 100)")
                    try kv.sync()
                    FileHandle.standardOutput.write(Data("synced \(n)\n".utf8))
                    n += 1
                }
            }
        }
    }
}
