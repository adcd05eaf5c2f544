import ArgumentParser
import Logging

/// The options of `ckfs debug http-floor`, declared once for `ckfs` and ckfs-server.
public struct HTTPFloorOptions: ParsableArguments {
    @Option(help: "The port; 0 picks a free one.") public var port = 0
    @Option(help: "How many bytes each answer holds.") public var bytes = 512
    @Option(help: "The log level, as for ckfs serve.") public var logLevel: Logger.Level?

    public init() {}
}
