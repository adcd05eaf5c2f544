import CloudStore
import Foundation
import Hummingbird
import NIOCore

/// A request's body, read whole within a size and a time: a body larger than the limit is
/// refused by its Content-Length before it is read, or as soon as it grows past the limit.
enum RequestBody {
    /// The body, refused early when it is larger than allowed or slower than allowed. The time
    /// limit is a timer of the connection's event loop: past it, the connection's input is shut,
    /// which ends the body where it stands, and the answer is 408 (cheaper than a timer task or
    /// a task per request, which go through the dispatch manager).
    static func read(_ request: inout Request, limit: Int, timeout: Double, on channel: any Channel) async throws(WebFailure) -> [UInt8] {
        if let length = request.headers[.contentLength].flatMap({ Int($0) }), length > limit {
            throw WebFailure(error: CKError(.limitExceeded, "the request body is \(length) bytes; ckfs serve takes at most \(limit) here"), status: .contentTooLarge)
        }
        let expired = Flag()
        let timer = channel.eventLoop.scheduleTask(in: .nanoseconds(Int64(timeout * 1e9))) {
            expired.set()
            channel.close(mode: .input, promise: nil)
        }
        let result: Result<ByteBuffer, any Error>
        do { result = .success(try await request.body.collect(upTo: limit)) } catch { result = .failure(error) }
        timer.cancel()
        if expired.isSet {
            throw WebFailure(error: CKError(.invalidArguments, "the request body did not arrive within \(Int(timeout)) seconds"), status: .requestTimeout)
        }
        switch result {
        case .success(let buffer): return Array(buffer.readableBytesView)
        case .failure: throw WebFailure(error: CKError(.limitExceeded, "the request body is larger than the \(limit) bytes ckfs serve takes here"), status: .contentTooLarge)
        }
    }

    /// Set once by the timer, read by the request.
    /// `@unchecked Sendable`: `value` is only touched under `lock`.
    private final class Flag: @unchecked Sendable {
        private let lock = NSLock()
        private var value = false
        func set() { lock.withLock { value = true } }
        var isSet: Bool { lock.withLock { value } }
    }
}
