import Foundation

/// A yes-or-no question asked on the terminal, for a program a person runs.
package enum TerminalPrompt {
    /// Asks `question` on stderr and reads the answer from stdin when both are a terminal;
    /// nil when they are not, or the answer is neither yes nor no.
    package static func ask(_ question: String) -> Bool? {
        guard Syscall.isTerminal(Posix.STDIN_FILENO), Syscall.isTerminal(Posix.STDERR_FILENO) else { return nil }
        FileHandle.standardError.write(Data("\(question) [y/n] ".utf8))
        guard let line = readLine() else { return nil }
        switch line.trimmingCharacters(in: .whitespaces).lowercased() {
        case "y", "yes": return true
        case "n", "no": return false
        default: return nil
        }
    }
}
