import ArgumentParser
import Testing
import TestSupport
@testable import ckfs

/// Every command of `ckfs` names itself. A command without a name is named by the argument
/// parser from its type's name (`String(describing:)`), and that costs each new process a search
/// of every protocol conformance in the binary per command, about a third of what starting
/// `ckfs` costs (docs/Performance.md, row 10e).
@Suite struct CommandTreeTests {
    @Test func everyCommandNamesItself() {
        var unnamed: [String] = []
        var seen = 0
        func walk(_ command: ParsableCommand.Type, path: String) {
            seen += 1
            let name = command.configuration.commandName
            if name == nil { unnamed.append(path + " " + String(describing: command)) }
            for sub in command.configuration.subcommands { walk(sub, path: path + " " + (name ?? "?")) }
        }
        walk(CKFS.self, path: "")
        #expect(seen > 60, "the walk reached \(seen) commands")
        #expect(unnamed.isEmpty, "commands without a commandName: \(unnamed)")
    }
}
