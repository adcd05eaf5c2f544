// swift-tools-version:6.0
import PackageDescription

// scripts/install sets CKFS_STATIC_EXECUTABLES=1. Without it the manifest has no unsafe flags, so
// other packages can depend on this one.
let installing = Context.environment["CKFS_STATIC_EXECUTABLES"] == "1"

// In a release install, ckfs's own modules reach the metadata of the generic types they use
// (`Set<String>`, `[Environment: …]`) through accessor functions the compiler writes, not by
// mangled name: the Swift runtime demangles a name at its first use and looks up each conformance
// it needs by searching every conformance record in the binary, which was 13% of a cold query's
// time (docs/Performance.md, row 10). Debug builds keep the default, so that an install after
// `swift build` still compiles only the two programs' modules.
let metadataAccessors: [SwiftSetting] =
    installing
    ? [.unsafeFlags(["-Xfrontend", "-disable-concrete-type-metadata-mangled-name-accessors"], .when(configuration: .release))]
    : []

// When installing, ckfs and ckfs-server are static executables at a fixed address (docs/Install.md
// says why). The settings are the two programs' own, so that an install after `swift build`
// (debug) compiles only their two modules again and relinks: every other module's objects are the
// same in both. `-static-stdlib` on their modules takes Foundation's module from swift_static, whose
// link list names the static libraries Foundation needs (ICU, CoreFoundation); the define makes the
// compiler see a change, as it does not count `-static-stdlib` as one.
let staticExecutable: (swift: [SwiftSetting], linker: [LinkerSetting]) =
    installing
    ? ([.unsafeFlags(["-static-stdlib"]), .define("CKFS_STATIC_EXECUTABLE")] + metadataAccessors,
       [.unsafeFlags(["-static-stdlib", "-use-ld=lld", "-Xclang-linker", "-static"])])
    : ([], [])

let package = Package(
    name: "ckfs",
    platforms: [.macOS(.v14)],
    products: [
        .library(name: "CloudKit", targets: ["CloudKit"]),
        .library(name: "CloudStore", targets: ["CloudStore"]),
        .library(name: "CloudStoreFS", targets: ["CloudStoreFS"]),
        .library(name: "CloudStoreBench", targets: ["CloudStoreBench"]),
        .library(name: "CloudStoreServerCore", targets: ["CloudStoreServerCore"]),
        .library(name: "CloudStoreServer", targets: ["CloudStoreServer"]),
        .executable(name: "ckfs", targets: ["ckfs"]),
        .executable(name: "ckfs-server", targets: ["ckfs-server"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-crypto", from: "3.0.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.4.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.0.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.0.0"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.0.0"),
    ],
    targets: [
        .target(name: "CCloudStoreShims"),
        // Each zone's index (index.sqlite), and the bench's baseline.
        .systemLibrary(name: "CSQLite", pkgConfig: "sqlite3", providers: [.apt(["libsqlite3-dev"])]),
        .target(
            name: "CloudStore",
            dependencies: [
                "CCloudStoreShims",
                "CSQLite",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: metadataAccessors
        ),
        // The face CloudKit code imports: Foundation and Apple's CloudKit classes, over the engine.
        .target(name: "CloudKit", dependencies: ["CloudStore", .product(name: "Logging", package: "swift-log")]),
        .systemLibrary(name: "CFuse3", pkgConfig: "fuse3", providers: [.apt(["libfuse3-dev"])]),
        // The FUSE request loop, in C: threads taking turns at /dev/fuse.
        .target(name: "CFuse3Loop", dependencies: ["CFuse3"]),
        .target(name: "CloudStoreFS", dependencies: ["CloudStore", "CFuse3", "CFuse3Loop", .product(name: "Logging", package: "swift-log")],
                swiftSettings: metadataAccessors),
        .target(name: "CloudStoreBench", dependencies: ["CloudStore", "CloudStoreServerCore"], swiftSettings: metadataAccessors),
        // What `ckfs serve` shares with the CLI that manages it, without HTTP: where it listens
        // and whom it lets in (API tokens, web sign-in, server-to-server keys, push tokens).
        .target(
            name: "CloudStoreServerCore",
            dependencies: ["CloudStore", .product(name: "Crypto", package: "swift-crypto")],
            swiftSettings: metadataAccessors
        ),
        // CloudKit Web Services over HTTP (`ckfs serve`), on Hummingbird.
        .target(
            name: "CloudStoreServer",
            dependencies: [
                "CloudStore",
                "CloudStoreServerCore",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: metadataAccessors
        ),
        // What the daemons' command lines share: the options of the servers `ckfs` starts,
        // declared once for ckfs and ckfs-server, and the daemons' log.
        .target(
            name: "DaemonCommandLine",
            dependencies: [
                "CloudStore",
                "CloudStoreServerCore",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: metadataAccessors
        ),
        // The CLI. It does not link the HTTP server: `ckfs serve` runs ckfs-server in its place,
        // so every other command starts without SwiftNIO's and Hummingbird's code and metadata.
        .executableTarget(
            name: "ckfs",
            dependencies: [
                "CloudStore",
                "CloudStoreFS",
                "CloudStoreBench",
                "CloudStoreServerCore",
                "DaemonCommandLine",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: staticExecutable.swift,
            linkerSettings: staticExecutable.linker
        ),
        // The program `ckfs serve` and `ckfs debug http-floor` become, with the same arguments.
        .executableTarget(
            name: "ckfs-server",
            dependencies: [
                "CloudStore",
                "CloudStoreServer",
                "CloudStoreServerCore",
                "DaemonCommandLine",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: staticExecutable.swift,
            linkerSettings: staticExecutable.linker
        ),
        // A small CloudKit app, as apps are written for Apple's platforms: its tests run it.
        .executableTarget(name: "NotesSync", dependencies: ["CloudKit"], path: "Examples/NotesSync"),
        // README's Swift example, run by the docs' tests (scripts/doc-harness/swift-example).
        .executableTarget(name: "ReadmeTour", dependencies: ["CloudKit", "CloudStore"], path: "Examples/ReadmeTour"),
        // What every test suite shares: temporary stores and folders, record helpers, child
        // processes. It reaches the engine through its public and `package` API, as a release
        // build (`scripts/install`) compiles it too.
        .target(name: "TestSupport", dependencies: ["CloudStore"], path: "Tests/TestSupport"),
        .testTarget(name: "CloudStoreTests", dependencies: ["CloudStore", "TestSupport"]),
        .testTarget(name: "CloudKitTests", dependencies: ["CloudKit", "CloudStore", "TestSupport"]),
        // Apps' older CloudKit code, in the language mode it was written in.
        .testTarget(name: "CloudKitSwift5Tests", dependencies: ["CloudKit", "CloudStore", "TestSupport"], swiftSettings: [.swiftLanguageMode(.v5)]),
        .testTarget(name: "CloudStoreFSTests", dependencies: ["CloudStore", "CloudStoreFS", "TestSupport"]),
        .testTarget(name: "ckfsTests", dependencies: ["CloudStore", "CloudKit", "CloudStoreFS", "TestSupport", "ckfs", "ckfs-server"]),
    ],
    swiftLanguageModes: [.v6]
)
