import CloudStore
import Hummingbird
import NIOCore

/// A request's body, read whole within a size and a time: a body larger than the limit is
/// refused by its Content-Length before it is read, or as soon as it grows past the limit.
enum RequestBody {
    /// The body, refused early when it is larger than allowed or slower than allowed.
    static func read(_ request: inout Request, limit: Int, timeout: Double) async throws(WebFailure) -> [UInt8] {
        if let length = request.headers[.contentLength].flatMap({ Int($0) }), length > limit {
            throw WebFailure(error: CKError(.limitExceeded, "the request body is \(length) bytes; ckfs serve takes at most \(limit) here"), status: .contentTooLarge)
        }
        let body = request.body
        do {
            let buffer = try await withThrowingTaskGroup(of: ByteBuffer?.self) { group in
                group.addTask { try await body.collect(upTo: limit) }
                group.addTask {
                    try await Task.sleep(for: .seconds(timeout))
                    return nil
                }
                defer { group.cancelAll() }
                guard let first = try await group.next(), let buffer = first else {
                    throw WebFailure(error: CKError(.invalidArguments, "the request body did not arrive within \(Int(timeout)) seconds"), status: .requestTimeout)
                }
                return buffer
            }
            return Array(buffer.readableBytesView)
        } catch let failure as WebFailure {
            throw failure
        } catch {
            throw WebFailure(error: CKError(.limitExceeded, "the request body is larger than the \(limit) bytes ckfs serve takes"), status: .contentTooLarge)
        }
    }
}
