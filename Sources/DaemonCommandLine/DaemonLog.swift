import ArgumentParser
import CloudStore
import Logging

/// The daemons' log (the mount daemon's and the web server's): swift-log's stream handler on
/// standard error, one line per event with its time and level. A mount daemon in the background
/// has `<store>/mount.log` as its standard error; one in front (`--foreground`) and `ckfs serve`
/// write to the terminal.
public enum DaemonLog {
    public static let levelVariable = "CKFS_LOG_LEVEL"

    /// A logger at `level`, else at `CKFS_LOG_LEVEL`'s, else at `info`.
    public static func logger(level: Logger.Level?, label: String = "ckfs.mount") -> Logger {
        var logger = Logger(label: label) { StreamLogHandler.standardError(label: $0) }
        logger.logLevel = level ?? environmentLevel ?? .info
        return logger
    }

    static var environmentLevel: Logger.Level? {
        Syscall.environmentValue(levelVariable).flatMap { Logger.Level(rawValue: $0.lowercased()) }
    }
}

extension Logger.Level: @retroactive ExpressibleByArgument {}
