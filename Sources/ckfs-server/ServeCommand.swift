import ArgumentParser
import CloudStore
import CloudStoreServer
import DaemonCommandLine
import Foundation

struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: ServerProgram.serve,
        abstract: "Serve the store as CloudKit Web Services over HTTP, in the foreground."
    )

    @OptionGroup var options: ServeOptions

    func run() async throws {
        let store = try reportingErrors { try Store.open(at: options.store ?? Store.defaultPath, reading: .server) }
        if let container = options.container {
            try reportingErrors {
                let known = try store.containerIdentifiers()
                guard known.contains(container) else {
                    throw CKError(.badContainer, "the store has no container \(container); it has \(known.joined(separator: ", "))")
                }
            }
        }
        let server = WebServer(store: store, configuration: options.configuration,
                               logger: DaemonLog.logger(level: options.logLevel, label: "ckfs.serve"))
        try await server.run { url in
            // Unbuffered: a script waits for this line to learn the port.
            try? FileHandle.standardOutput.write(contentsOf: Data("listening on \(url)\n".utf8))
        }
        store.waitForRecordFiles()
    }

    /// Reports a ``CKError`` as ckfs reports one (`ckfs: code: message`), and exits with 1.
    private func reportingErrors<T>(_ body: () throws -> T) throws -> T {
        do { return try body() } catch let error as CKError {
            FileHandle.standardError.write(Data("ckfs: \(error)\n".utf8))
            throw ExitCode(1)
        }
    }
}
