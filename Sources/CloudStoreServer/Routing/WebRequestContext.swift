import Hummingbird
import NIOCore

/// What a request carries besides itself: Hummingbird's core context, and the event loop of
/// its connection, whose timers bound how long its body may take.
struct WebRequestContext: RequestContext {
    var coreContext: CoreRequestContextStorage
    let eventLoop: any EventLoop

    init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        eventLoop = source.channel.eventLoop
    }
}
