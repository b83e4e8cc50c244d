/// Reassembles incoming WebSocket text frames into whole messages.
///
/// A frame of at most six characters that is a decimal number announces that the next
/// that-many frames are segments of one message (firebase-js-sdk
/// `WebSocketConnection.extractFrameCount_`); any other frame is a whole message. The keepalive
/// frame `"0"` announces zero segments and yields nothing.
///
/// Bounded: a message longer than ``maxMessageLength`` UTF-8 bytes, or an announced count
/// above ``maxSegments``, is refused with ``FrameError`` before it is buffered, so a peer cannot
/// make the receiver hold more than one maximal message.
@_spi(HearthInternals) public struct FrameAssembler: Sendable {
    /// The largest message accepted, in UTF-8 bytes.
    @_spi(HearthInternals) public let maxMessageLength: Int
    /// The most segments one message may announce.
    @_spi(HearthInternals) public var maxSegments: Int { maxMessageLength / FrameSplitter.maxFrameLength + 2 }

    private var remaining = 0
    private var buffer = ""
    private var bufferedBytes = 0

    /// An assembler refusing messages longer than `maxMessageLength` UTF-8 bytes.
    @_spi(HearthInternals) public init(maxMessageLength: Int) {
        precondition(maxMessageLength > 0)
        self.maxMessageLength = maxMessageLength
    }

    /// Whether a multi-frame message is partly received.
    @_spi(HearthInternals) public var isAssembling: Bool { remaining > 0 }

    /// The UTF-8 bytes of a partly received message held so far (0 when none is; never more
    /// than ``maxMessageLength``).
    @_spi(HearthInternals) public var bufferedByteCount: Int { remaining > 0 ? bufferedBytes : 0 }

    /// Feeds one received text frame; returns the message it completes, if any.
    /// - Throws: ``FrameError`` when the message would exceed the limits.
    @_spi(HearthInternals) public mutating func receive(_ frame: String) throws(FrameError) -> String? {
        if remaining == 0 {
            if frame.utf8.count <= 6, let count = Int(frame), count >= 0 {
                if count == 0 { return nil }  // keepalive
                guard count <= maxSegments else { throw .tooManySegments(count) }
                remaining = count
                buffer = ""
                bufferedBytes = 0
                return nil
            }
            guard frame.utf8.count <= maxMessageLength else { throw .messageTooLarge(limit: maxMessageLength) }
            return frame
        }
        bufferedBytes += frame.utf8.count
        guard bufferedBytes <= maxMessageLength else {
            remaining = 0
            buffer = ""
            throw .messageTooLarge(limit: maxMessageLength)
        }
        buffer += frame
        remaining -= 1
        if remaining > 0 { return nil }
        defer { buffer = "" }
        return buffer
    }
}

/// Why incoming frames were refused.
@_spi(HearthInternals) public enum FrameError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A message (whole or reassembled) longer than the limit, in UTF-8 bytes.
    case messageTooLarge(limit: Int)
    /// A segment count above the limit.
    case tooManySegments(Int)

    @_spi(HearthInternals) public var description: String {
        switch self {
        case .messageTooLarge(let limit): "message longer than \(limit) bytes"
        case .tooManySegments(let n): "a message announced \(n) frames, more than the size limit allows"
        }
    }
}
