import Foundation
import Testing
import TestSupport

/// What `import CloudKit`, `import CloudStore` and `import CloudStoreServerCore` show, read from the compiler's symbol graphs
/// of the modules this build made (`swift-symbolgraph-extract`, public symbols only):
/// CloudKit declares Apple's names and nothing of the engine; the engine's public API is the
/// list in `Tests/PublicAPI/CloudStore.txt`, so a symbol that becomes public by mistake (an
/// internal of the storage, the C library's door) fails here. The package's own modules
/// reach the engine's internals through `package` access, which no symbol graph shows.
@Suite struct PublicAPITests {
    /// ckfs's own public names in CloudKit, besides Apple's: the `NSPredicate` and
    /// `NSSortDescriptor` subclasses that `NSPredicate(format:)` and
    /// `NSSortDescriptor(key:ascending:)` make, which Linux Foundation lacks, and their factories.
    static let ckfsNamesInCloudKit: Set<String> = [
        "CloudKitPredicate", "CloudKitCompoundPredicate", "CloudKitPredicateFactory",
        "CloudKitSortDescriptor", "CloudKitSortDescriptorFactory",
    ]

    /// The engine's names that are also Apple's: CKError is its one error type, CKItemID the key
    /// of a partial failure's errors; CloudKit shows them as they are.
    static let appleNamesInTheEngine: Set<String> = ["CKError", "CKItemID"]

    @Test func cloudKitDeclaresApplesNamesOnly() throws {
        let symbols = try Self.publicSymbols(of: "CloudKit")
        let topLevel = Set(symbols.map { $0.path[0] })
        let foreign = topLevel.filter { !Self.isApplesName($0) && !Self.ckfsNamesInCloudKit.contains($0) }
        #expect(foreign.isEmpty, "CloudKit declares names that are not Apple's: \(foreign.sorted()); move them to the engine (CloudStore) or give them `package` access")
        #expect(topLevel.contains("CKContainer") && topLevel.contains("CKRecord") && topLevel.contains("NSUbiquitousKeyValueStore"),
                "the symbol graph of CloudKit lacks its classes: \(topLevel.sorted().prefix(20))")
        try Self.expectSame(symbols, as: "CloudKit")
    }

    @Test func theEnginesPublicAPIIsItsList() throws {
        let symbols = try Self.publicSymbols(of: "CloudStore")
        let topLevel = Set(symbols.map { $0.path[0] })
        let apple = topLevel.filter { Self.isApplesName($0) && !Self.appleNamesInTheEngine.contains($0) }
        #expect(apple.isEmpty, "the engine declares Apple's names public: \(apple.sorted()); they belong in Sources/CloudKit")
        for name in ["Syscall", "StoreLayout", "PosixIO", "StorageIO", "LogEntry", "ZoneCatalog", "ErrorObjects", "JSONParser"] {
            #expect(!topLevel.contains(name), "\(name) is public in the engine; give it `package` access")
        }
        let server = symbols.filter { s in
            ["WebServerConfiguration", "WebCaller", "ServerKeyInfo", "PushRegistration", "WebCredentials"].contains(s.path[0])
                || (s.path[0] == "Container" && s.path.count > 1 && Self.credentialMethods.contains { s.path[1].hasPrefix($0) })
        }
        #expect(server.isEmpty, "the engine declares the server's credentials public: \(server.map(\.line)); they belong in Sources/CloudStoreServerCore")
        try Self.expectSame(symbols, as: "CloudStore")
    }

    /// What the server and the CLI share is CloudStoreServerCore's: the server's configuration
    /// and the types of its credentials (its methods on `Container`, extensions of the engine's
    /// type, are not in its symbol graph; the test above keeps them out of the engine's).
    @Test func theServersCredentialsAreServerCoresAPI() throws {
        let symbols = try Self.publicSymbols(of: "CloudStoreServerCore")
        let topLevel = Set(symbols.map { $0.path[0] })
        #expect(topLevel.isSuperset(of: ["WebServerConfiguration", "WebCaller", "ServerKeyInfo", "PushRegistration"]),
                "CloudStoreServerCore's symbol graph lacks its types: \(topLevel.sorted())")
        try Self.expectSame(symbols, as: "CloudStoreServerCore")
    }

    /// The beginnings of the names of the credentials' methods on `Container`.
    static let credentialMethods = ["createAPIToken", "apiTokens", "removeAPIToken", "signIn", "webCaller", "addServerKey",
                                    "serverKey", "removeServerKey", "createPushToken", "registerPushToken", "isPushToken",
                                    "pushRegistration", "advancePushToken", "defaultWebAuthLifetime", "maxWebAuthLifetime"]

    // MARK: Symbol graphs

    struct Symbol: Hashable {
        var kind: String
        var path: [String]
        var line: String { kind + " " + path.joined(separator: ".") }
    }

    static func isApplesName(_ name: String) -> Bool {
        let scalars = Array(name.unicodeScalars)
        guard scalars.count > 2, ["CK", "CL", "NS"].contains(String(name.prefix(2))) else { return false }
        return CharacterSet.uppercaseLetters.contains(scalars[2])
    }

    /// The public symbols the module declares (extensions of other modules' types aside), as
    /// `scripts/public-api` reads them from this build's symbol graph.
    static func publicSymbols(of module: String) throws -> [Symbol] {
        let products = (CLIFixture.binary as NSString).deletingLastPathComponent
        let r = CLIFixture.exec(MountHelperTests.packageRoot + "/scripts/public-api", [module, "--products", products])
        try #require(r.status == 0, "scripts/public-api: \(r.stderr)")
        return r.stdout.split(separator: "\n").compactMap { line in
            let parts = line.split(separator: " ", maxSplits: 1)
            guard parts.count == 2 else { return nil }
            return Symbol(kind: String(parts[0]), path: parts[1].split(separator: ".", omittingEmptySubsequences: false).map(String.init))
        }
    }

    /// The module's public symbols are those `Tests/PublicAPI/<module>.txt` lists, one a line.
    static func expectSame(_ symbols: [Symbol], as module: String) throws {
        let file = MountHelperTests.packageRoot + "/Tests/PublicAPI/\(module).txt"
        let listed = Set(try String(contentsOfFile: file, encoding: .utf8).split(separator: "\n").map(String.init))
        let now = Set(symbols.map(\.line))
        let added = now.subtracting(listed).sorted(), removed = listed.subtracting(now).sorted()
        #expect(added.isEmpty && removed.isEmpty, """
            \(module)'s public API is not Tests/PublicAPI/\(module).txt (`scripts/public-api \(module) --write` writes it from the build).
            Public now and not listed (give it `package` access if only ckfs's modules use it, else list it): \(added.prefix(40))
            Listed and no longer public (remove the line): \(removed.prefix(40))
            """)
    }
}
