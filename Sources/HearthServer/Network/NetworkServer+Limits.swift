#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension NetworkServer {
    /// What the network side lets the world make the server hold: connections, time, and bytes
    /// buffered on the way in and queued on the way out — each per connection (where
    /// ``ServerConfiguration`` sets it) and in total (here). Every limit answers the same
    /// way: the connection that would exceed it is refused or closed; no other client notices.
    ///
    /// With the defaults the network side holds at most about 1 GiB, whatever clients do:
    /// 10,000 connections of about 3.5 KiB each when idle, 40 KiB while a head of nearly ``maxHeadBytes``
    /// is arriving (NIO's buffer grows in powers of two) — 400 MiB — plus the 256 MiB of
    /// ``maxBufferedBodyBytes``, the 64 MiB of ``maxBufferedFrameBytes`` and the 256 MiB of
    /// ``maxQueuedBytes``. The core's own state (listens, partly assembled messages, the
    /// database) comes on top.
    public struct Limits: Sendable {
        /// TCP connections open at once: REST requests, event streams and WebSockets alike. The
        /// cap in force is also at most the process's open-file limit (`RLIMIT_NOFILE`, see
        /// ``raiseFileDescriptorLimit()``) less ``fileDescriptorReserve``, so accepting never
        /// fails for want of a descriptor. Past it a new connection is accepted and closed at
        /// once (shed); the open ones go on. Default 10,000.
        public var maxConnections: Int = 10_000
        /// File descriptors kept free below `RLIMIT_NOFILE` for everything but connections: the
        /// store's segment, checkpoint, manifest and lock files, the listening socket, each event
        /// loop's epoll and wake descriptors, the commit thread, a connection being shed. Default 128.
        public var fileDescriptorReserve: Int = 128
        /// How long (ms) a request's head may take to arrive, counted from the connection's
        /// opening or from the end of the previous response (an idle keep-alive connection); it
        /// bounds the WebSocket upgrade the same way. Past it the connection is closed. Default 10 s.
        public var headTimeoutMs: Int64 = 10_000
        /// The largest request head (request line and header fields), in bytes: NIO's parser
        /// refuses a longer one (400) and the connection closes. Default 16 KiB.
        public var maxHeadBytes: Int = 16 << 10
        /// A request body's grace period (ms) from its head; after it the body must keep
        /// arriving at ``minBodyBytesPerSecond`` on average, or the request is answered 408 and
        /// the connection closed. Default 10 s.
        public var bodyTimeoutMs: Int64 = 10_000
        /// The slowest average rate a request body may arrive at after ``bodyTimeoutMs``, in
        /// bytes per second (a body of n bytes may take the grace plus n / rate seconds).
        /// Default 1,024.
        public var minBodyBytesPerSecond: Int = 1_024
        /// REST request bodies buffered at once across all connections, in bytes of buffer (each
        /// body is at most ``ServerConfiguration/maxRESTBodyBytes``, in a buffer of the next
        /// power of two, as NIO allocates). A body announced with `Content-Length` reserves its
        /// buffer before it is read; a chunked one as it grows; either is answered 503 when the
        /// reservation would pass this total, and the reservation is returned when the request is
        /// answered or its connection closes. Default 256 MiB.
        public var maxBufferedBodyBytes: Int = 256 << 20
        /// WebSocket frames being received at once across all connections, in bytes of buffer: a
        /// frame reserves the buffer the length its header announces needs (at most
        /// ``NetworkServer/maxFrameBytes``, rounded up to a power of two as NIO allocates) until
        /// it is complete, a fragmented message its fragments' buffer until the last. A connection
        /// whose frame would pass the total is closed with status 1013 (try again later).
        /// Default 64 MiB.
        public var maxBufferedFrameBytes: Int = 64 << 20
        /// Bytes queued to clients and not yet taken by their sockets (the buffers holding them),
        /// across all connections
        /// (each at most ``ServerConfiguration/maxBufferedBytesPerConnection`` for
        /// WebSockets and event streams). Past it, the connection with the most bytes queued —
        /// the slowest reader — is disconnected, as often as needed to come back under.
        /// Default 256 MiB.
        public var maxQueuedBytes: Int = 256 << 20

        /// The defaults.
        public init() {}

        /// The connection cap in force under an open-file limit of `fileLimit` descriptors:
        /// ``maxConnections``, or less to keep the reserve; at least 1.
        func connectionCap(fileLimit: Int) -> Int {
            max(1, min(maxConnections, fileLimit - fileDescriptorReserve))
        }
    }

    /// Raises the soft open-file limit (`RLIMIT_NOFILE`) to the hard limit, so the connection
    /// cap is not needlessly low, and returns the soft limit now in force. `hearth serve` calls
    /// it once at startup; it changes the whole process.
    @discardableResult
    public static func raiseFileDescriptorLimit() -> Int {
        var limit = rlimit()
        guard getrlimit(resourceNoFile, &limit) == 0 else { return Int.max }
        if limit.rlim_cur < limit.rlim_max {
            var raised = limit
            raised.rlim_cur = limit.rlim_max
            #if canImport(Darwin)
            // Darwin refuses a soft limit above OPEN_MAX however high the hard one is.
            raised.rlim_cur = min(raised.rlim_cur, rlim_t(OPEN_MAX))
            #endif
            _ = setrlimit(resourceNoFile, &raised)  // refused: the soft limit stays, and so does a lower cap
        }
        return openFileLimit()
    }

    /// The soft open-file limit in force (`Int.max` when unlimited — `RLIM_INFINITY` is all ones —
    /// or unknown).
    static func openFileLimit() -> Int {
        var limit = rlimit()
        guard getrlimit(resourceNoFile, &limit) == 0, limit.rlim_cur != rlim_t.max,
            limit.rlim_cur <= rlim_t(Int.max)
        else { return Int.max }
        return Int(limit.rlim_cur)
    }

    #if canImport(Glibc)
    static let resourceNoFile = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
    #else
    static let resourceNoFile = RLIMIT_NOFILE
    #endif
}
