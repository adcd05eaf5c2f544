import ArgumentParser
import CloudStoreServer
import DaemonCommandLine
import Foundation

struct HTTPFloorCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: ServerProgram.httpFloor,
        abstract: "Serve a fixed body to every request, with ckfs serve's framework and middlewares: the bench's HTTP floor.")

    @OptionGroup var options: HTTPFloorOptions

    func run() async throws {
        let bytes = options.bytes
        let body = [UInt8]("{\"floor\":\"".utf8) + [UInt8](repeating: 0x78, count: max(0, bytes - 12)) + [UInt8]("\"}".utf8)
        var configuration = WebServer.Configuration()
        configuration.port = options.port
        // `listening on URL` first, as ckfs serve prints it.
        try await WebServer.runFloor(configuration: configuration, body: body,
                                     logger: DaemonLog.logger(level: options.logLevel, label: "ckfs.http-floor")) { url in
            try? FileHandle.standardOutput.write(contentsOf: Data("listening on \(url)\n".utf8))
        }
    }
}
