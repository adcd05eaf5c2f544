// swift-tools-version:6.1
import PackageDescription

// docs/WebServices.md's MistKit example (the transport a MistKit client is given to reach ckfs),
// built on its own by scripts/doc-harness/web-client and run against `ckfs serve`. A package
// of its own: ckfs does not depend on swift-openapi-*, only this example of a client does.
let package = Package(
    name: "MistKitTransport",
    platforms: [.macOS(.v14)],
    dependencies: [
        .package(url: "https://github.com/apple/swift-openapi-runtime", from: "1.13.4"),
        .package(url: "https://github.com/apple/swift-openapi-urlsession", from: "1.4.0"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
    ],
    targets: [
        .executableTarget(name: "MistKitTransport", dependencies: [
            .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
            .product(name: "OpenAPIURLSession", package: "swift-openapi-urlsession"),
            .product(name: "HTTPTypes", package: "swift-http-types"),
        ]),
    ],
    swiftLanguageModes: [.v6]
)
