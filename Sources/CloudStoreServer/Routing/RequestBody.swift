import CloudStore
import Hummingbird
import NIOCore

/// A request's body, read whole within a size and a time: a body larger than the limit is
/// refused by its Content-Length before it is read, or as soon as it grows past the limit.
enum RequestBody {
    /// The body, refused early when it is larger than allowed or slower than allowed. The time
    /// limit is a timer of the connection's event loop that cancels the read (cheaper than a
    /// timer task per request, which goes through the dispatch manager).
    static func read(_ request: inout Request, limit: Int, timeout: Double, on eventLoop: any EventLoop) async throws(WebFailure) -> [UInt8] {
        if let length = request.headers[.contentLength].flatMap({ Int($0) }), length > limit {
            throw WebFailure(error: CKError(.limitExceeded, "the request body is \(length) bytes; ckfs serve takes at most \(limit) here"), status: .contentTooLarge)
        }
        let body = request.body
        let reading = Task { try await body.collect(upTo: limit) }
        let timer = eventLoop.scheduleTask(in: .nanoseconds(Int64(timeout * 1e9))) { reading.cancel() }
        defer { timer.cancel() }
        let result = await reading.result
        if reading.isCancelled {
            throw WebFailure(error: CKError(.invalidArguments, "the request body did not arrive within \(Int(timeout)) seconds"), status: .requestTimeout)
        }
        switch result {
        case .success(let buffer): return Array(buffer.readableBytesView)
        case .failure: throw WebFailure(error: CKError(.limitExceeded, "the request body is larger than the \(limit) bytes ckfs serve takes here"), status: .contentTooLarge)
        }
    }
}
