import ArgumentParser
import HearthServer

/// `hearth serve`'s resource limits: what any client, signed in or not, can make the server hold.
struct ServeLimitOptions: ParsableArguments {
    static let defaults = NetworkServer.Limits()
    static let core = ServerConfiguration()

    @Option(
        name: .customLong("max-connections"),
        help: ArgumentHelp(
            "TCP connections open at once (REST, event streams, WebSockets); past it a new one is closed at once. Also kept --file-descriptor-reserve below the open-file limit, which the server raises to its hard limit.",
            valueName: "N"))
    var maxConnections = defaults.maxConnections

    @Option(
        name: .customLong("file-descriptor-reserve"),
        help: ArgumentHelp(
            "Descriptors kept free below the open-file limit for the store's files and the server's own; the connection cap stays below the limit by this much.",
            valueName: "N"))
    var fileDescriptorReserve = defaults.fileDescriptorReserve

    @Option(
        name: .customLong("head-timeout"),
        help: ArgumentHelp(
            "Seconds a request head (or a WebSocket upgrade) may take from the connection's opening or the previous response's end; past it the connection closes.",
            valueName: "SECONDS"))
    var headTimeout = Int(defaults.headTimeoutMs / 1000)

    @Option(
        name: .customLong("body-timeout"),
        help: ArgumentHelp(
            "Seconds of grace for a request body; after them it must arrive at --min-body-rate on average, or is answered 408.",
            valueName: "SECONDS"))
    var bodyTimeout = Int(defaults.bodyTimeoutMs / 1000)

    @Option(
        name: .customLong("min-body-rate"),
        help: ArgumentHelp("The slowest average rate of a request body after its grace.", valueName: "BYTES_PER_SECOND")
    )
    var minBodyRate = defaults.minBodyBytesPerSecond

    @Option(
        name: .customLong("max-head-bytes"),
        help: ArgumentHelp(
            "The largest request head (request line and headers); larger is answered 400.", valueName: "BYTES"))
    var maxHeadBytes = defaults.maxHeadBytes

    @Option(
        name: .customLong("max-body-bytes"),
        help: ArgumentHelp(
            "The largest REST request body; a larger Content-Length is answered 413 before the body is read.",
            valueName: "BYTES"))
    var maxBodyBytes = core.maxRESTBodyBytes

    @Option(
        name: .customLong("max-buffered-body-bytes"),
        help: ArgumentHelp(
            "REST request bodies buffered at once across all connections; a request that would pass it is answered 503.",
            valueName: "BYTES"))
    var maxBufferedBodyBytes = defaults.maxBufferedBodyBytes

    @Option(
        name: .customLong("max-buffered-frame-bytes"),
        help: ArgumentHelp(
            "WebSocket frames being received at once across all connections (each at most 1 MiB); a connection whose frame would pass it is closed (status 1013).",
            valueName: "BYTES"))
    var maxBufferedFrameBytes = defaults.maxBufferedFrameBytes

    @Option(
        name: .customLong("max-queued-bytes-per-connection"),
        help: ArgumentHelp(
            "Bytes queued to one WebSocket or event stream that does not read them; past it that client is disconnected.",
            valueName: "BYTES"))
    var maxQueuedBytesPerConnection = core.maxBufferedBytesPerConnection

    @Option(
        name: .customLong("max-queued-bytes"),
        help: ArgumentHelp(
            "Bytes queued to all clients together; past it the client with the most queued (the slowest reader) is disconnected.",
            valueName: "BYTES"))
    var maxQueuedBytes = defaults.maxQueuedBytes

    @Option(
        name: .customLong("max-message-bytes"),
        help: ArgumentHelp(
            "The largest WebSocket protocol message (reassembled from its frames); a larger one closes the connection.",
            valueName: "BYTES"))
    var maxMessageBytes = core.maxMessageBytes

    @Option(
        name: .customLong("max-held-bytes"),
        help: ArgumentHelp(
            "Bytes of WebSocket messages not yet handled, across all connections: multi-frame messages still arriving and messages queued while their connection waits; a connection that would pass it is closed (single-frame messages are never held).",
            valueName: "BYTES"))
    var maxHeldBytes = core.maxHeldBytesTotal

    @Option(
        name: .customLong("partial-message-timeout"),
        help: ArgumentHelp(
            "Seconds a multi-frame WebSocket message may take to arrive; past it the connection closes.",
            valueName: "SECONDS"))
    var partialMessageTimeout = Int(core.partialMessageTimeoutMs / 1000)

    @Option(
        name: .customLong("max-listens-per-connection"),
        help: ArgumentHelp("Listens one connection may hold; past it a listen is refused.", valueName: "N"))
    var maxListensPerConnection = core.maxListensPerConnection

    @Option(
        name: .customLong("max-listens"),
        help: ArgumentHelp(
            "Listens (event streams included) across all connections; past it a listen is refused.", valueName: "N"))
    var maxListens = core.maxListensTotal

    @Option(
        name: .customLong("max-ondisconnect-bytes-per-connection"),
        help: ArgumentHelp(
            "Bytes of onDisconnect operations one connection may queue (at most 10,000 operations).",
            valueName: "BYTES"))
    var maxOnDisconnectBytesPerConnection = core.maxOnDisconnectBytesPerConnection

    @Option(
        name: .customLong("max-ondisconnect-bytes"),
        help: ArgumentHelp(
            "Bytes of onDisconnect operations queued across all connections; past it an operation is refused.",
            valueName: "BYTES"))
    var maxOnDisconnectBytes = core.maxOnDisconnectBytesTotal

    @Option(
        name: .customLong("max-waiting-bytes-per-connection"),
        help: ArgumentHelp(
            "Bytes of pushes waiting to be rendered for one connection (each weighs the write that caused it); past it the connection is disconnected.",
            valueName: "BYTES"))
    var maxWaitingBytesPerConnection = core.maxWaitingBytesPerConnection

    @Option(
        name: .customLong("max-waiting-bytes"),
        help: ArgumentHelp(
            "Bytes of pushes waiting to be rendered across all connections; past it the connection with the most waiting is disconnected.",
            valueName: "BYTES"))
    var maxWaitingBytes = core.maxWaitingBytesTotal

    @Option(
        name: .customLong("max-commit-queue-bytes"),
        help: ArgumentHelp(
            "Bytes of WebSocket messages and REST requests taken in and not yet committed; past it a WebSocket is not read until there is room (first come, first served) and a REST request is answered 503.",
            valueName: "BYTES"))
    var maxCommitQueueBytes = core.maxCommitQueueBytes

    func validate() throws {
        for (flag, value) in [
            ("--max-message-bytes", maxMessageBytes), ("--max-held-bytes", maxHeldBytes),
            ("--partial-message-timeout", partialMessageTimeout),
            ("--max-listens-per-connection", maxListensPerConnection), ("--max-listens", maxListens),
            ("--max-ondisconnect-bytes-per-connection", maxOnDisconnectBytesPerConnection),
            ("--max-ondisconnect-bytes", maxOnDisconnectBytes),
            ("--max-waiting-bytes-per-connection", maxWaitingBytesPerConnection),
            ("--max-waiting-bytes", maxWaitingBytes), ("--max-commit-queue-bytes", maxCommitQueueBytes),
        ] where value <= 0 {
            throw ValidationError("\(flag) must be positive")
        }
        for (flag, value) in [
            ("--max-connections", maxConnections), ("--file-descriptor-reserve", fileDescriptorReserve),
            ("--head-timeout", headTimeout), ("--body-timeout", bodyTimeout),
            ("--min-body-rate", minBodyRate), ("--max-head-bytes", maxHeadBytes), ("--max-body-bytes", maxBodyBytes),
            ("--max-buffered-body-bytes", maxBufferedBodyBytes), ("--max-buffered-frame-bytes", maxBufferedFrameBytes),
            ("--max-queued-bytes-per-connection", maxQueuedBytesPerConnection), ("--max-queued-bytes", maxQueuedBytes),
        ] where value <= 0 {
            throw ValidationError("\(flag) must be positive")
        }
        for (flag, seconds) in [("--head-timeout", headTimeout), ("--body-timeout", bodyTimeout)] where seconds > 86_400
        {
            throw ValidationError("\(flag) must be at most 86400 seconds (a day)")
        }
    }

    /// The network limits these flags set.
    var limits: NetworkServer.Limits {
        var limits = NetworkServer.Limits()
        limits.maxConnections = maxConnections
        limits.fileDescriptorReserve = fileDescriptorReserve
        limits.headTimeoutMs = Int64(headTimeout) * 1000
        limits.bodyTimeoutMs = Int64(bodyTimeout) * 1000
        limits.minBodyBytesPerSecond = minBodyRate
        limits.maxHeadBytes = maxHeadBytes
        limits.maxBufferedBodyBytes = maxBufferedBodyBytes
        limits.maxBufferedFrameBytes = maxBufferedFrameBytes
        limits.maxQueuedBytes = maxQueuedBytes
        return limits
    }

    /// Sets the core's per-request and per-connection limits these flags name.
    func apply(to configuration: inout ServerConfiguration) {
        configuration.maxRESTBodyBytes = maxBodyBytes
        configuration.maxBufferedBytesPerConnection = maxQueuedBytesPerConnection
        configuration.maxMessageBytes = maxMessageBytes
        configuration.maxHeldBytesTotal = maxHeldBytes
        configuration.partialMessageTimeoutMs = Int64(min(partialMessageTimeout, 86_400)) * 1000
        configuration.maxListensPerConnection = maxListensPerConnection
        configuration.maxListensTotal = maxListens
        configuration.maxOnDisconnectBytesPerConnection = maxOnDisconnectBytesPerConnection
        configuration.maxOnDisconnectBytesTotal = maxOnDisconnectBytes
        configuration.maxWaitingBytesPerConnection = maxWaitingBytesPerConnection
        configuration.maxWaitingBytesTotal = maxWaitingBytes
        configuration.maxCommitQueueBytes = maxCommitQueueBytes
    }
}
