/// Splits an outgoing message into WebSocket text frames, as Firebase's clients and servers do.
///
/// A message of at most ``maxFrameLength`` UTF-16 code units goes as one frame. A longer one
/// goes as a frame holding only the decimal count of segments, then that many segments of at
/// most ``maxFrameLength`` code units each (firebase-js-sdk `WebSocketConnection.send`,
/// `WEBSOCKET_MAX_FRAME_SIZE = 16384`). JavaScript counts UTF-16 code units; so do we, and a
/// segment never ends between the two halves of a surrogate pair (the JS SDK may; a receiver
/// concatenates segments before decoding, so both are read the same).
@_spi(HearthInternals) public enum FrameSplitter {
    /// The longest frame, in UTF-16 code units.
    @_spi(HearthInternals) public static let maxFrameLength = 16_384

    /// The frames to send for `message`, in order.
    @_spi(HearthInternals) public static func frames(for message: String) -> [String] {
        let utf16 = message.utf16
        if utf16.count <= maxFrameLength { return [message] }
        var segments: [String] = []
        var segment = ""
        var units = 0
        for scalar in message.unicodeScalars {
            let width = scalar.utf16.count
            if units + width > maxFrameLength {
                segments.append(segment)
                segment = ""
                units = 0
            }
            segment.unicodeScalars.append(scalar)
            units += width
        }
        if !segment.isEmpty { segments.append(segment) }
        return [String(segments.count)] + segments
    }
}
