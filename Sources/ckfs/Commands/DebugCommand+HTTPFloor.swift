import ArgumentParser
import CloudStoreServer
import Foundation
import Logging

extension DebugCommand {
    struct HTTPFloor: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "http-floor",
            abstract: "Serve a fixed body to every request, with ckfs serve's framework and middlewares: the bench's HTTP floor.")
        @Option(help: "The port; 0 picks a free one.") var port = 0
        @Option(help: "How many bytes each answer holds.") var bytes = 512
        @Option(help: "The log level, as for ckfs serve.") var logLevel: Logger.Level?

        func run() {
            runUntilDone { try await serveFloor() }
        }

        private func serveFloor() async throws {
            let body = [UInt8]("{\"floor\":\"".utf8) + [UInt8](repeating: 0x78, count: max(0, bytes - 12)) + [UInt8]("\"}".utf8)
            var configuration = WebServer.Configuration()
            configuration.port = port
            // `listening on URL` first, as ckfs serve prints it.
            try await WebServer.runFloor(configuration: configuration, body: body,
                                         logger: DaemonLog.logger(level: logLevel, label: "ckfs.http-floor")) { url in
                try? FileHandle.standardOutput.write(contentsOf: Data("listening on \(url)\n".utf8))
            }
        }
    }
}
