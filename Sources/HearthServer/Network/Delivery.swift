import Dispatch
import Synchronization

/// Where the runtime delivers a connection's messages: a WebSocket or an event stream.
protocol ConnectionSink: Sendable {
    /// Sends one message (a protocol message, split into frames by the sink, or an event).
    /// Never blocks: it may run on the commit thread (``Delivery``).
    func send(_ text: String)
    /// Closes the connection after what was sent.
    func close()
    /// Stops (false) or resumes (true) reading the connection's socket: the runtime stops a
    /// connection whose message waits for room in the commit queue, so the bytes it sends
    /// meanwhile stay in the network (the peer's TCP window closes) rather than in the server.
    func setReading(_ reading: Bool)
}

/// One connection's outbound messages, rendered (``OutboundMessage/render()``) and handed to
/// its sink in order, one at a time, on GCD's global queue (short known texts aside: below): a
/// connection whose messages are slow to render — a thousand filtered windows, a large value —
/// delays itself, not the commit thread or any other connection.
///
/// The order is kept by a list of jobs and a flag saying one of GCD's threads is running them
/// (at most one is) rather than by a serial `DispatchQueue` of its own: an idle connection
/// then holds an empty list and a flag, where a queue and its label are a few hundred bytes
/// for every connection, most of which wait for nothing.
///
/// A message whose text is known when the core produces it (an `ok`, a hello, a refusal: most of
/// a writer's traffic) and is short (``inlineLimit``) is not queued when nothing of its
/// connection waits before it: it is handed to the sink on the caller's thread (the commit
/// thread) at once, which costs a frame's copy and a hand-off to the event loop. A GCD job for
/// it would cost two thread wake-ups per acknowledged write (the worker's, then the event
/// loop's) for no rendering at all. Sinks never block: they count what they write against the
/// outbound budgets and hand it to their event loop.
///
/// What waits here is counted (each message's ``OutboundMessage/weight`` plus ``fixedCost``),
/// for this connection and in a total shared by all of them; the runtime aborts a connection
/// over its limit, or the one with the most waiting when the total is over.
final class Delivery: Sendable {
    /// What every waiting message counts beyond its weight: the closure and the values it
    /// holds.
    static let fixedCost = 256

    /// The longest known text (UTF-8 bytes) sent on the caller's thread rather than queued.
    static let inlineLimit = 1_024

    let sink: any ConnectionSink
    /// The jobs not yet run, in order, and whether a thread is running them.
    private let jobs = Mutex<(waiting: [@Sendable () -> Void], running: Bool)>(([], false))
    /// The cost of the messages waiting to be rendered and sent.
    let waiting = Atomic<Int>(0)
    private let total: SharedCount
    /// No more messages are taken (a close is queued).
    private let ended = Atomic<Bool>(false)
    /// Messages still queued are dropped rather than rendered.
    private let dropping = Atomic<Bool>(false)

    /// A delivery to `sink`, counting what waits into `total` too.
    init(sink: any ConnectionSink, total: SharedCount) {
        self.sink = sink
        self.total = total
    }

    /// Queues a message; ignored once the connection is closing.
    func send(_ message: OutboundMessage) {
        guard !ended.load(ordering: .relaxed) else { return }
        if let text = message.text, text.utf8.count <= Delivery.inlineLimit, startInline() {
            sink.send(text)
            endInline()
            return
        }
        let cost = Delivery.fixedCost + message.weight
        waiting.add(cost, ordering: .relaxed)
        total.value.add(cost, ordering: .relaxed)
        enqueue { [self] in
            defer {
                waiting.subtract(cost, ordering: .relaxed)
                total.value.subtract(cost, ordering: .relaxed)
            }
            guard !dropping.load(ordering: .relaxed), let text = message.render() else { return }
            sink.send(text)
        }
    }

    /// Closes the connection after the messages queued so far.
    func close() {
        guard !ended.exchange(true, ordering: .relaxed) else { return }
        enqueue { [sink] in sink.close() }
    }

    /// Waits until everything queued so far has run (the runtime's stop, before the event
    /// loops the sinks write through shut down). Never called from a job.
    func drain() {
        let done = DispatchSemaphore(value: 0)
        enqueue { done.signal() }
        done.wait()
    }

    /// Closes the connection now, without sending what still waits (over a limit, or data that
    /// may not be released) — not behind a render that may be what is slow.
    func abort() {
        dropping.store(true, ordering: .relaxed)
        ended.store(true, ordering: .relaxed)
        sink.close()
    }

    /// Takes the run for the caller when no job waits or runs (true): what is queued meanwhile
    /// waits for ``endInline()``.
    private func startInline() -> Bool {
        jobs.withLock { jobs -> Bool in
            guard !jobs.running, jobs.waiting.isEmpty else { return false }
            jobs.running = true
            return true
        }
    }

    /// Gives the run back after an inline send: jobs queued meanwhile start on GCD's global
    /// queue, behind it.
    private func endInline() {
        let more = jobs.withLock { jobs -> Bool in
            if jobs.waiting.isEmpty { jobs.running = false }
            return jobs.running
        }
        if more { DispatchQueue.global().async { [self] in run() } }
    }

    /// Adds `job` after the others; starts a run on GCD's global queue unless one is under way.
    private func enqueue(_ job: @escaping @Sendable () -> Void) {
        let start = jobs.withLock { jobs -> Bool in
            jobs.waiting.append(job)
            guard !jobs.running else { return false }
            jobs.running = true
            return true
        }
        if start { DispatchQueue.global().async { [self] in run() } }
    }

    /// Runs the jobs in order, including those added meanwhile, until none is left. The list's
    /// storage is handed over whole each time, so an idle connection keeps none.
    private func run() {
        while true {
            let batch = jobs.withLock { jobs -> [@Sendable () -> Void] in
                if jobs.waiting.isEmpty { jobs.running = false }
                defer { jobs.waiting = [] }
                return jobs.waiting
            }
            if batch.isEmpty { return }
            for job in batch { job() }
        }
    }
}

/// A count several owners update (an `Atomic` shared by reference).
final class SharedCount: Sendable {
    let value = Atomic<Int>(0)
}
