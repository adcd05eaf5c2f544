import ArgumentParser
import DaemonCommandLine

extension DebugCommand {
    struct HTTPFloor: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "http-floor",
            abstract: "Serve a fixed body to every request, with ckfs serve's framework and middlewares: the bench's HTTP floor.")

        @OptionGroup var options: HTTPFloorOptions

        func run() throws {
            try ServerLaunch.become(ServerProgram.httpFloor, after: ["debug", "http-floor"])
        }
    }
}
