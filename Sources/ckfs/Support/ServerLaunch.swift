import CloudStore
import DaemonCommandLine
import Foundation

/// How `ckfs serve` and `ckfs debug http-floor` become the server: ckfs-server runs in this
/// process's place with the same arguments. The CLI leaves the HTTP server (SwiftNIO,
/// Hummingbird) out of its own binary, so that every other command starts without mapping that
/// code or searching its protocol conformances (docs/Performance.md, row 10e).
enum ServerLaunch {
    /// Runs ckfs-server's `subcommand` with the arguments that follow `path` (this command's
    /// names) on this process's command line; returns only by throwing.
    static func become(_ subcommand: String, after path: [String]) throws -> Never {
        let arguments = CommandLine.arguments
        // The command's names come first: the commands above it take no options.
        guard arguments.count > path.count, Array(arguments[1...path.count]) == path else {
            throw Report.failure(CKError(.internalError, "ckfs \(path.joined(separator: " ")) was not given its arguments after its name"))
        }
        let server = try serverProgram()
        let error = Syscall.exec(server, arguments: [server, subcommand] + arguments[(path.count + 1)...])
        throw Report.failure(CKError(.internalError, "cannot run \(server); reinstall ckfs with scripts/install", cause: .system(error)))
    }

    /// Where ckfs-server is: beside this program (a build's products), else in
    /// `../libexec/ckfs/` from it (an installed ckfs, as `scripts/install` lays it out).
    static func serverProgram() throws -> String {
        let folder = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent().path
        let places = [folder + "/" + ServerProgram.name, folder + "/../libexec/ckfs/" + ServerProgram.name]
        for place in places {
            if case .success(let status?) = Syscall.stat(place), !status.isDirectory { return place }
        }
        throw Report.failure(CKError(.internalError, """
            the web server program \(ServerProgram.name) is in neither \(places.joined(separator: " nor ")); \
            build it (swift build --product \(ServerProgram.name)) or reinstall ckfs with scripts/install
            """))
    }
}
