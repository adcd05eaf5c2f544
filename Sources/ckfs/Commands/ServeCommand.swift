import ArgumentParser
import CloudStore
import CloudStoreServer
import Foundation
import Logging

struct ServeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Serve the store as CloudKit Web Services over HTTP, in the foreground."
    )

    @Option(help: "The store directory (env CKFS_STORE; default $XDG_DATA_HOME/ckfs or ~/.local/share/ckfs).")
    var store: String?

    @Option(help: "Serve only this container (default: every container of the store).")
    var container: String?

    @Option(help: "The address to listen on.")
    var host = "127.0.0.1"

    @Option(help: "The port to listen on; 0 picks a free one.")
    var port = 8880

    @Option(help: "The largest request body taken, in bytes.")
    var maxBody = WebServer.Configuration().maxBodyBytes

    @Option(help: "How long a request's body may take to arrive, in seconds; a slower one is refused (408).")
    var bodyTimeout = WebServer.Configuration().bodyTimeout

    @Option(help: "How long a web courier poll waits for a notification, in seconds, before it ends with 204.")
    var longPollSeconds = WebServer.Configuration().longPollSeconds

    @Option(help: "The log level: trace, debug, info, notice, warning, error or critical (env CKFS_LOG_LEVEL; default info).")
    var logLevel: Logger.Level?

    func validate() throws {
        guard (0...65535).contains(port) else { throw ValidationError("--port must be between 0 and 65535") }
        guard maxBody > 0 else { throw ValidationError("--max-body must be at least 1 byte") }
        guard bodyTimeout > 0, bodyTimeout <= 3600 else { throw ValidationError("--body-timeout must be more than 0 and at most 3600 seconds") }
        guard longPollSeconds > 0, longPollSeconds <= 3600 else { throw ValidationError("--long-poll-seconds must be more than 0 and at most 3600 seconds") }
    }

    func run() {
        runUntilDone { try await serve() }
    }

    private func serve() async throws {
        let store = try await serveErrors { try Store.open(at: self.store ?? Store.defaultPath, reading: .server) }
        if let container {
            try await serveErrors {
                let known = try store.containerIdentifiers()
                guard known.contains(container) else {
                    throw CKError(.badContainer, "the store has no container \(container); it has \(known.joined(separator: ", "))")
                }
            }
        }
        var configuration = WebServer.Configuration(host: host, port: port, maxBodyBytes: maxBody, bodyTimeout: bodyTimeout)
        configuration.containers = container.map { [$0] }
        configuration.longPollSeconds = longPollSeconds
        let server = WebServer(store: store, configuration: configuration,
                               logger: DaemonLog.logger(level: logLevel, label: "ckfs.serve"))
        try await server.run { url in
            // Unbuffered: a script waits for this line to learn the port.
            try? FileHandle.standardOutput.write(contentsOf: Data("listening on \(url)\n".utf8))
        }
        store.waitForRecordFiles()
    }

    private func serveErrors<T>(_ body: () throws -> T) async throws -> T {
        do { return try body() } catch let error as CKError { throw Report.failure(error) }
    }
}
