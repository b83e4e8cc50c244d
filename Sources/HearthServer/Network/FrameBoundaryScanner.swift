/// Follows the frame boundaries of RFC 6455 (§5.2) through the raw bytes a WebSocket
/// connection receives, without keeping any: after each chunk it knows whether a frame is in
/// progress and the payload length its header announced — what ``FrameReader``, which holds a
/// frame's bytes until the frame is whole, is about to buffer. ``WebSocketHandler`` reserves
/// that length from the server's frame budget before the reader keeps the bytes.
///
/// It reads headers as NIO's `WebSocketFrameDecoder` and ``FrameReader`` do (any length
/// encoding, minimal or not; a mask key when the mask bit is set) and refuses the frames they
/// refuse for their length.
@_spi(HearthInternals) public struct FrameBoundaryScanner: Sendable {
    /// A frame announced a payload longer than the limit (the decoder closes the connection).
    @_spi(HearthInternals) public struct FrameTooLarge: Error, Equatable {}

    enum Stage: Equatable {
        case opcode
        case length
        case extendedLength(left: Int, value: UInt64, masked: Bool)
        case maskKey(left: Int)
        case payload(left: Int)
    }

    /// The longest payload accepted.
    public let maxPayloadBytes: Int
    private(set) var stage = Stage.opcode
    /// The payload length of the frame in progress, once its header has given it.
    public private(set) var announced: Int?
    /// Frames complete so far.
    public private(set) var completed = 0

    /// A scanner refusing payloads longer than `maxPayloadBytes`.
    public init(maxPayloadBytes: Int) { self.maxPayloadBytes = maxPayloadBytes }

    /// Follows `bytes`, the next received chunk.
    public mutating func scan(_ bytes: UnsafeRawBufferPointer) throws(FrameTooLarge) {
        var i = 0
        while i < bytes.count {
            switch stage {
            case .opcode:
                stage = .length
                i += 1
            case .length:
                let byte = bytes[i]
                i += 1
                let masked = byte & 0x80 != 0
                switch byte & 0x7F {
                case 126: stage = .extendedLength(left: 2, value: 0, masked: masked)
                case 127: stage = .extendedLength(left: 8, value: 0, masked: masked)
                case let n: try begin(UInt64(n), masked: masked)
                }
            case .extendedLength(let left, let value, let masked):
                let next = value << 8 | UInt64(bytes[i])
                i += 1
                if left > 1 {
                    stage = .extendedLength(left: left - 1, value: next, masked: masked)
                } else {
                    try begin(next, masked: masked)
                }
            case .maskKey(let left):
                i += 1
                if left > 1 { stage = .maskKey(left: left - 1) } else { startPayload(announced ?? 0) }
            case .payload(let left):
                let taken = min(left, bytes.count - i)
                i += taken
                startPayload(left - taken)
            }
        }
    }

    private mutating func begin(_ length: UInt64, masked: Bool) throws(FrameTooLarge) {
        guard length <= UInt64(maxPayloadBytes) else { throw FrameTooLarge() }
        announced = Int(length)
        if masked { stage = .maskKey(left: 4) } else { startPayload(Int(length)) }
    }

    private mutating func startPayload(_ left: Int) {
        if left > 0 {
            stage = .payload(left: left)
        } else {
            stage = .opcode
            announced = nil
            completed += 1
        }
    }
}
