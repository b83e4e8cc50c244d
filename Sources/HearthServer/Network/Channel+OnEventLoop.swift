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
    ///
    /// Off the loop, a channel that is no longer active is not handed `body` at all, and false
    /// is returned: what it would write could only be dropped, and a task given to a loop that
    /// has shut down is something NIO warns of today and means to trap on. A loop closes every
    /// channel it serves before it stops taking tasks, so an inactive channel is the sign that
    /// can be read from any thread (`isActive` is); the caller returns what it counted for the
    /// write. What is left is a channel closed between the check and the `execute`, during a
    /// server's stop.
    @discardableResult
    func onEventLoop(_ body: @escaping @Sendable () -> Void) -> Bool {
        if eventLoop.inEventLoop {
            body()
            return true
        }
        guard isActive else { return false }
        eventLoop.execute(body)
        return true
    }
}
