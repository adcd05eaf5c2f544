import CloudStore
import Foundation
import Hummingbird
import NIOCore

/// A request's body, read whole within a size and a time: a body larger than the limit is
/// refused by its Content-Length before it is read, or as soon as it grows past the limit.
enum RequestBody {
    /// The body, refused early when it is larger than allowed or slower than allowed. Past the
    /// time limit (`deadlines`), the connection's input is shut, which ends the body where it
    /// stands, and the answer is 408.
    static func read(_ request: inout Request, limit: Int, deadlines: BodyDeadlines, on channel: any Channel) async throws(WebFailure) -> [UInt8] {
        if let length = request.headers[.contentLength].flatMap({ Int($0) }), length > limit {
            throw WebFailure(error: CKError(.limitExceeded, "the request body is \(length) bytes; ckfs serve takes at most \(limit) here"), status: .contentTooLarge)
        }
        let ticket = deadlines.start(channel)
        let result: Result<ByteBuffer, any Error>
        do { result = .success(try await request.body.collect(upTo: limit)) } catch { result = .failure(error) }
        if deadlines.finish(ticket) {
            throw WebFailure(error: CKError(.invalidArguments, "the request body did not arrive within \(Int(deadlines.seconds)) seconds"), status: .requestTimeout)
        }
        switch result {
        case .success(let buffer): return Array(buffer.readableBytesView)
        case .failure: throw WebFailure(error: CKError(.limitExceeded, "the request body is larger than the \(limit) bytes ckfs serve takes here"), status: .contentTooLarge)
        }
    }
}
