import ArgumentParser
import CloudStore
import Foundation

extension DebugCommand {
    /// A long-lived key-value client driven by lines on standard input (`set KEY VALUE`,
    /// `remove KEY`, `sync`, `get KEY`, `quit`); it answers each with one line and prints
    /// every did-change-externally event as a JSON line
    /// `{"event":"change","reason":"serverChange","keys":[…]}`.
    struct KeyValueClient: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "kv-client", abstract: "A key-value client driven by standard input.")
        @OptionGroup var options: StoreOptions
        @Option(help: "Seconds between automatic syncs.") var every = 0.2

        func run() throws {
            try reportingErrors {
                let kv = try KeyValueStore(store: options.openStore(), containerIdentifier: options.container, caller: options.caller,
                                           environment: options.environment, synchronizeEvery: every)
                let observer = NotificationCenter.default.addObserver(forName: KeyValueStore.didChangeExternallyNotification, object: kv, queue: nil) { note in
                    let reason = note.userInfo?[KeyValueStore.changeReasonKey] as? Int ?? -1
                    let keys = note.userInfo?[KeyValueStore.changedKeysKey] as? [String] ?? []
                    let name = KeyValueChangeReason(rawValue: reason)?.description ?? "\(reason)"
                    emit(.object(["event": .string("change"), "reason": .string(name), "keys": .array(keys.map { .string($0) })]))
                }
                defer { NotificationCenter.default.removeObserver(observer) }
                emit(.object(["event": .string("ready")]))
                while let line = readLine() {
                    let parts = line.split(separator: " ", maxSplits: 2).map(String.init)
                    guard let command = parts.first else { continue }
                    do throws(CKError) {
                        switch (command, parts.count) {
                        case ("set", 3): try kv.setValue(.string(parts[2]), forKey: parts[1])
                        case ("remove", 2): try kv.removeValue(forKey: parts[1])
                        case ("sync", 1): try kv.sync()
                        case ("get", 2):
                            emit(.object(["event": .string("value"), "value": kv.value(forKey: parts[1])?.jsonValue ?? .null]))
                            continue
                        case ("quit", 1): return
                        default: throw CKError(.invalidArguments, "unknown command: \(line)")
                        }
                        emit(.object(["event": .string("ok"), "command": .string(command)]))
                    } catch {
                        emit(.object(["event": .string("error"), "code": .string(error.code.name), "message": .string(error.message)]))
                    }
                }
            }
        }
    }
}
