@_spi(HearthInternals) import HearthWire

/// Incoming WebSocket data messages to protocol v5 messages, the same in every transport: text
/// goes through `FrameAssembler` (count-prefixed segments joined, keepalives dropped, a bound
/// on the size); what is refused names the close code to send (RFC 6455 section 7.4.1).
struct InboundFrames {
    /// A message the client will not take: close the connection with `code`, report `reason`.
    struct Refusal: Error, Equatable {
        /// The WebSocket close code to send.
        var code: UInt16
        /// What `.closed` reports.
        var reason: String
    }

    /// 1003: a binary frame (protocol v5 is text only).
    static let unacceptableData: UInt16 = 1003
    /// 1007: a text frame that is not UTF-8.
    static let invalidPayload: UInt16 = 1007
    /// 1009: a message over the limit.
    static let messageTooLarge: UInt16 = 1009

    /// The default limit on a whole incoming message: 256 MiB, at least Firebase's documented
    /// limit on the size of a single response served by the database (256 MB).
    static let defaultMaxMessageBytes = 256 << 20

    /// `bytes` clamped to what a transport accepts as its limit: 1 ... `UInt32.max` (the
    /// largest frame SwiftNIO's WebSocket decoder takes).
    static func clampedLimit(_ bytes: Int) -> Int { min(max(1, bytes), Int(UInt32.max)) }

    /// The refusal of any binary frame.
    static let binaryRefusal = Refusal(
        code: unacceptableData, reason: "the server sent a binary frame (protocol v5 is text)")

    private var assembler: FrameAssembler

    /// Frames joined into messages of at most `maxMessageBytes` UTF-8 bytes.
    init(maxMessageBytes: Int) {
        assembler = FrameAssembler(maxMessageLength: maxMessageBytes)
    }

    /// One text frame as decoded text; returns the protocol message it completes, if any.
    mutating func text(_ frame: String) throws(Refusal) -> String? {
        do {
            return try assembler.receive(frame)
        } catch {
            throw Refusal(code: Self.messageTooLarge, reason: "the server sent too large a message: \(error)")
        }
    }

    /// One text frame's payload bytes, checked to be UTF-8 first.
    mutating func text(utf8 payload: some Collection<UInt8>) throws(Refusal) -> String? {
        guard let frame = String(validating: payload, as: UTF8.self) else {
            throw Refusal(code: Self.invalidPayload, reason: "the server sent a text frame that is not UTF-8")
        }
        return try text(frame)
    }
}
