import ArgumentParser
import CloudStore
import Foundation

extension DatabaseScope: ExpressibleByArgument {}
extension CloudStore.Environment: ExpressibleByArgument {}
extension SavePolicy: ExpressibleByArgument {
    public init?(argument: String) {
        switch argument {
        case "if-unchanged", "ifServerRecordUnchanged": self = .ifServerRecordUnchanged
        case "changed-keys", "changedKeys": self = .changedKeys
        case "all-keys", "allKeys": self = .allKeys
        default: return nil
        }
    }
    public static var allValueStrings: [String] { ["if-unchanged", "changed-keys", "all-keys"] }
}
