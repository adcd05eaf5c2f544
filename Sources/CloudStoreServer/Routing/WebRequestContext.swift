import Hummingbird
import NIOCore

/// What a request carries besides itself: Hummingbird's core context, and its connection,
/// whose event loop's timers bound how long its body may take.
struct WebRequestContext: RequestContext {
    var coreContext: CoreRequestContextStorage
    let channel: any Channel

    init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        channel = source.channel
    }
}
