import NIOCore

// Writes that start off a channel's event loop (a connection's delivery queue, the runtime's
// commit thread) go through here.

extension Channel {
    /// Runs `body` on the channel's event loop: at once when called there, else queued behind
    /// what is already queued there — the order `writeAndFlush` keeps by itself.
    ///
    /// Why not `writeAndFlush` from any thread: off the loop it makes its promise first and then
    /// queues the write. Once the loop has shut down (a server stopping while a push is on its
    /// way) the queued write is dropped, and with it the promise, which NIO's debug builds trap
    /// on as leaked. Here the promise is made inside `body`, which a shut-down loop never runs.
    func onEventLoop(_ body: @escaping @Sendable () -> Void) {
        if eventLoop.inEventLoop {
            body()
        } else {
            eventLoop.execute(body)
        }
    }
}
