import ArgumentParser
import HearthServer

/// `hearth serve`'s resource limits: what any client, signed in or not, can make the server hold.
struct ServeLimitOptions: ParsableArguments {
    static let defaults = NetworkServer.Limits()
    static let core = ServerCore.Configuration()

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

    func validate() throws {
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
    func apply(to configuration: inout ServerCore.Configuration) {
        configuration.maxRESTBodyBytes = maxBodyBytes
        configuration.maxBufferedBytesPerConnection = maxQueuedBytesPerConnection
    }
}
