import Foundation
import Testing
import TestSupport
@testable import CloudStore

/// `ckfs serve --port 0` on a temporary store, with an API token, web auth tokens for alice and
/// bob, and a server-to-server key made by openssl; and a way to run the Python clients in
/// `Tests/http` against it.
final class ServeFixture: @unchecked Sendable {
    let cli: CLIFixture
    let server: Spawned
    let url: String
    let apiToken: String
    let webToken: String
    let webTokenBob: String
    let keyID: String
    let keyPEM: String
    let container = "iCloud.local.ckfs"
    static let pythonDirectory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("http").path

    /// Where the store is mounted, when the fixture was made with `mounted: true`.
    let mountPoint: String?

    /// `temporaryDirectory`: the server's TMPDIR, where it stages uploads; the test's own
    /// temporary directory when nil. `initArgs`: what `ckfs init` of the store is given.
    init(serveArgs: [String] = [], mounted: Bool = false, temporaryDirectory: String? = nil, initArgs: [String] = []) throws {
        let cli = try CLIFixture(initArgs: initArgs)
        self.cli = cli
        func line(_ args: [String], user: String? = "alice") throws -> String {
            let r = cli.run(args, user: user)
            guard r.status == 0 else { throw CKError(.internalError, "ckfs \(args.joined(separator: " ")): \(r.stderr)") }
            return r.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        }
        apiToken = try line(["token", "create"])
        webToken = try line(["token", "sign-in"])
        webTokenBob = try line(["token", "sign-in"], user: "bob")
        let keyPEM = cli.store + "-key.pem"
        self.keyPEM = keyPEM
        let openssl = CLIFixture.exec("/usr/bin/env", ["openssl", "ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", keyPEM])
        guard openssl.status == 0 else { throw CKError(.internalError, "openssl: \(openssl.stderr)") }
        keyID = try line(["key", "add", keyPEM])
        if mounted {
            let dir = MountFixture.base + "/" + UUID().uuidString + "/M"
            try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
            let r = CLIFixture.exec(CLIFixture.binary, ["mount", dir, "--store", cli.store])
            guard r.status == 0 else { throw CKError(.internalError, "mount failed: \(r.stderr)") }
            mountPoint = dir
        } else {
            mountPoint = nil
        }
        (server, url) = try Self.start(store: cli.store, args: serveArgs, temporaryDirectory: temporaryDirectory)
    }

    deinit {
        if server.isRunning { server.signal(SIGTERM); server.wait() }
        if let mountPoint {
            _ = CLIFixture.exec(CLIFixture.binary, ["unmount", mountPoint])
            try? FileManager.default.removeItem(atPath: (mountPoint as NSString).deletingLastPathComponent)
        }
        try? FileManager.default.removeItem(atPath: keyPEM)
    }

    /// Starts `ckfs serve --port 0` (with `temporaryDirectory` as its TMPDIR, when given) and
    /// waits for its `listening on URL` line; its standard error (its log) is read as it comes.
    static func start(store: String, args: [String] = [], temporaryDirectory: String? = nil) throws -> (Spawned, String) {
        let environment = temporaryDirectory.map { ProcessInfo.processInfo.environment.merging(["TMPDIR": $0]) { _, new in new } }
        let p = try Spawned(CLIFixture.binary, ["serve", "--port", "0", "--store", store] + args, environment: environment, stderr: .pipe)
        let text = p.output { $0.contains("\n") }
        guard let line = text.split(separator: "\n").first, line.hasPrefix("listening on ") else {
            p.signal(SIGTERM)
            throw CKError(.internalError, "ckfs serve did not start: \(text) \(p.errorOutputToEnd)")
        }
        return (p, String(line.dropFirst("listening on ".count)))
    }

    /// The server's standard error (its log) so far.
    var serverLog: String { String(decoding: server.errorOutput, as: UTF8.self) }

    /// The environment the Python clients read (see Tests/http/cloudkit_client.py).
    var environment: [String: String] {
        var env = ProcessInfo.processInfo.environment
        env["CKFS_URL"] = url
        env["CKFS_CONTAINER"] = container
        env["CKFS_API_TOKEN"] = apiToken
        env["CKFS_WEB_TOKEN"] = webToken
        env["CKFS_WEB_TOKEN_BOB"] = webTokenBob
        env["CKFS_KEY_ID"] = keyID
        env["CKFS_KEY_PEM"] = keyPEM
        env["CKFS_STORE"] = cli.store
        env["CKFS_BIN"] = CLIFixture.binary
        if let mountPoint { env["CKFS_MOUNT"] = mountPoint }
        env["PYTHONDONTWRITEBYTECODE"] = "1"
        return env
    }

    /// Runs `python3 Tests/http/SCRIPT TESTS...`; the output says which assertion failed.
    func python(_ script: String, _ tests: [String], extra: [String: String] = [:]) -> CLIFixture.Output {
        CLIFixture.exec("/usr/bin/env", ["python3", Self.pythonDirectory + "/" + script] + tests,
                        environment: environment.merging(extra) { _, new in new })
    }

    /// Runs one `test_…` function of a script of `Tests/http/` on a new fixture and records
    /// whether it passed, with the server's log when it did not.
    static func expectPasses(_ script: String, _ test: String, serveArgs: [String] = [], mounted: Bool = false,
                             sourceLocation: SourceLocation = #_sourceLocation) throws {
        let fixture = try ServeFixture(serveArgs: serveArgs, mounted: mounted)
        let out = fixture.python(script, [test])
        #expect(out.status == 0, "\(out.stdout)\(out.stderr)\nserver log:\n\(fixture.serverLog.suffix(3000))", sourceLocation: sourceLocation)
        #expect(out.stdout.contains("\(test): passed"), sourceLocation: sourceLocation)
    }
}
