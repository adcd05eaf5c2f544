/// What was wrong in a text and where (1-based line and column): the error of every parser
/// of the package (JSON, property lists, predicates).
public struct SyntaxError: Error, Sendable, Equatable, CustomStringConvertible {
    public var message: String
    public var line: Int
    public var column: Int
    /// Whether the text is one line (a predicate), where the place reads as a character's.
    public var isInOneLine = false

    public init(message: String, line: Int, column: Int) {
        (self.message, self.line, self.column) = (message, line, column)
    }

    /// The error at character `position` (1-based) of a one-line text.
    public init(message: String, position: Int) {
        (self.message, self.line, self.column, self.isInOneLine) = (message, 1, position, true)
    }

    /// The character of a one-line text the error is at (its column).
    public var position: Int { column }

    public var description: String {
        isInOneLine ? "at character \(column): \(message)" : "line \(line), column \(column): \(message)"
    }

    /// The error at byte offset `position` of `bytes` (the JSON and property-list parsers').
    static func at(_ position: Int, in bytes: [UInt8], _ message: String) -> SyntaxError {
        let end = min(position, bytes.count)
        var line = 1
        var lineStart = 0
        for i in 0..<end where bytes[i] == UInt8(ascii: "\n") {
            line += 1
            lineStart = i + 1
        }
        // Columns count characters, not bytes.
        let column = String(decoding: bytes[lineStart..<end], as: UTF8.self).count + 1
        return SyntaxError(message: message, line: line, column: column)
    }
}
