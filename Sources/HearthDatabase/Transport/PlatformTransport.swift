/// The transport ``Database`` uses unless ``Database/Options/transport`` names one: SwiftNIO
/// on Linux, `URLSessionWebSocketTask` on Apple platforms (so an app links no SwiftNIO and no
/// second TLS library).
enum PlatformTransport {
    /// This platform's transport with the given limits.
    static func make(
        connectTimeout: Duration = .seconds(30), maxMessageBytes: Int = InboundFrames.defaultMaxMessageBytes
    ) -> any Transport {
        #if HEARTH_NIO_TRANSPORT
        WebSocketTransport(
            connectTimeout: .nanoseconds(Int64(connectTimeout / .nanoseconds(1))), maxMessageBytes: maxMessageBytes)
        #elseif canImport(Darwin)
        URLSessionTransport(connectTimeout: connectTimeout, maxMessageBytes: maxMessageBytes)
        #else
        #error("HearthDatabase has a WebSocket transport for Linux (SwiftNIO) and Apple platforms (URLSession) only")
        #endif
    }
}
