/// The limits and modes of a server: what `hearth serve`'s flags set, handed to the
/// ``ServerRuntime`` that serves one database.
///
/// Every limit bounds something a client can grow, per connection and in total; the defaults are
/// the documented ones (`hearth serve --help`, the RunningTheServer article).
public struct ServerConfiguration: Sendable {
    /// The host name sent in the hello (`h`), which clients reconnect to, when neither
    /// ``publicHost`` nor the connection's own `Host` header names one: the bound address.
    public var host: String = "127.0.0.1"
    /// The host (and port) clients should reconnect to, sent in every hello (`h`):
    /// `hearth serve --public-host`, for a server behind a proxy or a name. Nil: the `Host`
    /// the client connected with.
    public var publicHost: String? = nil
    /// Emulator mode: unsigned tokens and `owner` accepted; the default policy allows all.
    public var emulator: Bool = false
    /// App Check enforcement (`hearth serve --app-check-key-file`, a test mode of
    /// Firebase's): a WebSocket connection's reads and writes are refused
    /// (`permission_denied`) until it sends a valid App Check token (`appcheck`; checked by
    /// the runtime's App Check verifier), an invalid one shuts the connection down
    /// (`Invalid appcheck token`), and one that expires is revoked (`apc`). Off: `appcheck`
    /// and `unappcheck` are acknowledged and nothing is enforced.
    public var enforcesAppCheck: Bool = false
    /// The largest WebSocket message accepted, in UTF-8 bytes (Firebase's SDKs write at
    /// most 16 MB at once).
    public var maxMessageBytes: Int = 16 << 20
    /// The largest REST request body, in bytes (Firebase allows 256 MB; this server holds
    /// its database in memory, so less).
    public var maxRESTBodyBytes: Int = 64 << 20
    /// Listens one connection may hold.
    public var maxListensPerConnection: Int = 10_000
    /// Listens across all connections (each a path, a query and a tag: about 200 bytes).
    public var maxListensTotal: Int = 1_000_000
    /// onDisconnect operations one connection may queue.
    public var maxOnDisconnectPerConnection: Int = 10_000
    /// The bytes of onDisconnect operations one connection may queue (as the messages that
    /// queued them measured).
    public var maxOnDisconnectBytesPerConnection: Int = 16 << 20
    /// The bytes of onDisconnect operations queued across all connections.
    public var maxOnDisconnectBytesTotal: Int = 256 << 20
    /// Messages one connection may send while it waits (for its token to be checked, or for
    /// writes to resume after a failed commit).
    public var maxQueuedWhileAuthenticating: Int = 1_000
    /// The bytes one connection may send while it waits (as
    /// ``maxQueuedWhileAuthenticating``, counted in UTF-8 bytes).
    public var maxQueuedBytesPerConnection: Int = 16 << 20
    /// The bytes the core holds for messages not yet handled, across all connections: the
    /// frames of multi-frame messages still being received, and messages queued while their
    /// connection waits. A connection whose frame would pass it is refused (single-frame
    /// messages are never held, so small requests still get through).
    public var maxHeldBytesTotal: Int = 256 << 20
    /// A multi-frame message must be complete this long (ms) after its first frame, or the
    /// connection is refused (a slow sender cannot hold a partial message forever).
    public var partialMessageTimeoutMs: Int64 = 60_000
    /// A WebSocket connection that sends nothing for this long (ms) is closed and its
    /// onDisconnect operations run (clients send the keepalive `"0"` every 45 s).
    public var idleTimeoutMs: Int64 = 120_000
    /// The most bytes queued to one client that does not read its socket before the
    /// server disconnects it (rather than buffer without bound).
    public var maxBufferedBytesPerConnection: Int = 64 << 20
    /// The most bytes of messages waiting to be rendered for one connection (each push
    /// weighs the request that caused it, `OutboundMessage.weight`) before the server
    /// disconnects it: a connection whose pushes cost more to render than writes arrive
    /// cannot pin every version of the data they were made from.
    public var maxWaitingBytesPerConnection: Int = 64 << 20
    /// The most bytes of messages waiting to be rendered across all connections; past it,
    /// the connection with the most waiting is disconnected.
    public var maxWaitingBytesTotal: Int = 512 << 20
    /// The most bytes of WebSocket messages and REST requests (their UTF-8 text, plus 256
    /// bytes each) taken in and not yet committed and released by ``ServerRuntime``'s commit
    /// thread. A message that finds no room waits, first come first served, and its
    /// connection is not read meanwhile; a REST request is answered `503`. One message larger
    /// than the bound is taken alone into an empty queue.
    public var maxCommitQueueBytes: Int = 64 << 20
    /// How often an event stream gets a `keep-alive` event (ms).
    public var keepAliveIntervalMs: Int64 = 30_000
    /// The most writers whose watermark the server remembers for exactly-once writes
    /// (`WriteStamp`). When a new writer would exceed it, the least recently advanced
    /// sixteenth of the table (at least one) is evicted, durably; an evicted writer's
    /// re-sent writes are applied again (plain at-least-once, as in Firebase). About 100
    /// bytes each in memory and in the store's checkpoint.
    public var maxWriters: Int = 100_000
    /// Offer exactly-once writes in the hello (`"x": ["w"]`). Off, the server speaks plain
    /// protocol v5 and ignores stamps.
    public var exactlyOnceWrites: Bool = true
    /// The default configuration.
    public init() {}
}
