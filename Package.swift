// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "ckfs",
    platforms: [.macOS(.v14)],
    products: [
        .library(name: "CloudStore", targets: ["CloudStore"]),
        .executable(name: "ckfs", targets: ["ckfs"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-crypto", from: "3.0.0"),
    ],
    targets: [
        .target(name: "CCloudStoreShims"),
        .target(
            name: "CloudStore",
            dependencies: ["CCloudStoreShims", .product(name: "Crypto", package: "swift-crypto")]
        ),
        .executableTarget(
            name: "ckfs",
            dependencies: [
                "CloudStore",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        .testTarget(name: "CloudStoreTests", dependencies: ["CloudStore"]),
        .testTarget(name: "ckfsTests", dependencies: ["CloudStore", "ckfs"]),
    ],
    swiftLanguageModes: [.v6]
)
