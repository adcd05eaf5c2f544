import CloudStore
import Hummingbird

/// A request no route takes (an unknown path, or a known one with another method) gets
/// CloudKit's error dictionary (`NOT_FOUND`, 404), never the framework's bare 404: clients
/// read `serverErrorCode` and `reason` from every error.
struct UnknownEndpointMiddleware<Context: RequestContext>: RouterMiddleware {
    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let error as HTTPError where error.status == .notFound || error.status == .methodNotAllowed {
            let reason = "no endpoint \(request.method) \(request.uri.path): the paths and methods are CloudKit Web Services' (docs/WebServices.md)"
            return WebAPI.json(CKError(.unknownItem, reason).webServicesDictionary(), status: .notFound)
        }
    }
}
