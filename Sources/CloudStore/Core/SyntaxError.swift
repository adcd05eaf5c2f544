/// What was wrong in a text and where (1-based line and column): the JSON and property-list
/// parsers' errors.
public struct SyntaxError: Error, Sendable, Equatable, CustomStringConvertible {
    public var message: String
    public var line: Int
    public var column: Int
    public var description: String { "line \(line), column \(column): \(message)" }

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
