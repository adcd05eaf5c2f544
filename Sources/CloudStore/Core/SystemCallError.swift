import Foundation

/// A failed system call: which call, on what, and the errno it returned.
public struct SystemCallError: Error, Sendable, CustomStringConvertible, Equatable {
    public var call: String
    public var path: String
    public var errno: Int32

    public init(call: String, path: String, errno: Int32) {
        self.call = call
        self.path = path
        self.errno = errno
    }

    public var description: String { "\(call)(\(path)): \(Syscall.errorText(errno)) [errno \(errno)]" }
}
