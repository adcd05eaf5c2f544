import Foundation
import Hummingbird
import Logging

/// Logs one line per request: method, path without the query (it holds tokens), status and
/// milliseconds taken.
struct RequestLogMiddleware<Context: RequestContext>: RouterMiddleware {
    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let start = ContinuousClock.now
        let status: Int
        do {
            let response = try await next(request, context)
            status = response.status.code
            log(request, context, status: status, since: start)
            return response
        } catch let error as HTTPResponseError {
            log(request, context, status: error.status.code, since: start)
            throw error
        }
    }

    private func log(_ request: Request, _ context: Context, status: Int, since start: ContinuousClock.Instant) {
        let elapsed = ContinuousClock.now - start
        let ms = Double(elapsed.components.seconds) * 1000 + Double(elapsed.components.attoseconds) / 1e15
        context.logger.info("\(request.method) \(request.uri.path) \(status) \(String(format: "%.1f", ms)) ms")
    }
}
