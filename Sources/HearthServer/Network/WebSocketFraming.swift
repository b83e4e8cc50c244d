import NIOCore

/// Cuts the bytes a WebSocket connection receives into frames (RFC 6455 §5.2), as NIO's
/// `WebSocketFrameDecoder` does, inside ``WebSocketHandler`` rather than in a handler of its
/// own: every handler in a connection's pipeline is an object and a pipeline context that an
/// idle connection holds for as long as it is open, a few hundred bytes each.
///
/// It refuses what NIO's decoder refuses, with the close status NIO's error handler sends: a
/// payload longer than ``maxPayloadBytes`` (1009), a control frame that is fragmented or longer
/// than 125 bytes (1002) — each as soon as the frame's length is known, before its payload
/// comes. The bytes of a frame not yet whole are kept; none once the frames are read, so an idle
/// connection holds no buffer.
@_spi(HearthInternals) public struct FrameReader {
    /// One frame, its payload unmasked.
    @_spi(HearthInternals) public struct Frame {
        /// Whether this is the last frame of its message (RFC 6455's FIN bit).
        public var fin: Bool
        /// The opcode (the low four bits of the first byte).
        public var opcode: UInt8
        /// The payload, unmasked.
        public var payload: ByteBuffer
    }

    /// A frame the reader will not read, with the close status that says why.
    @_spi(HearthInternals) public struct Refused: Error, Equatable {
        /// The close status: 1009 (too long) or 1002 (a protocol error).
        public let status: UInt16
    }

    /// The longest payload accepted.
    public let maxPayloadBytes: Int
    /// The received bytes not yet read as frames.
    public private(set) var pending: ByteBuffer?

    /// A reader refusing payloads longer than `maxPayloadBytes`.
    public init(maxPayloadBytes: Int) { self.maxPayloadBytes = maxPayloadBytes }

    /// Adds the next received chunk.
    public mutating func append(_ bytes: inout ByteBuffer) {
        guard var held = pending else {
            pending = bytes
            return
        }
        pending = nil  // so that `held` owns its storage alone and grows it in place
        // The frames read so far go first: what stays is at most one frame's worth.
        if held.readerIndex > 0 { held.discardReadBytes() }
        held.writeBuffer(&bytes)
        pending = held
    }

    /// Drops the bytes not read (the connection is closing).
    public mutating func clear() { pending = nil }

    /// The next whole frame, or nil until more bytes come.
    public mutating func next() throws(Refused) -> Frame? {
        guard let bytes = pending else { return nil }
        let start = bytes.readerIndex
        guard let first = bytes.getInteger(at: start, as: UInt8.self),
            let second = bytes.getInteger(at: start + 1, as: UInt8.self)
        else { return nil }
        var at = start + 2
        let length: UInt64
        switch second & 0x7F {
        case 126:
            guard let word = bytes.getInteger(at: at, as: UInt16.self) else { return nil }
            length = UInt64(word)
            at += 2
        case 127:
            guard let word = bytes.getInteger(at: at, as: UInt64.self) else { return nil }
            length = word
            at += 8
        case let short:
            length = UInt64(short)
        }
        guard length <= UInt64(maxPayloadBytes) else { throw Refused(status: 1009) }
        let isControl = first & 0x08 != 0
        let fin = first & 0x80 != 0
        if isControl, !fin || length > 125 { throw Refused(status: 1002) }
        var key: UInt32?
        if second & 0x80 != 0 {
            guard let mask = bytes.getInteger(at: at, as: UInt32.self) else { return nil }
            key = mask
            at += 4
        }
        guard var payload = bytes.getSlice(at: at, length: Int(length)) else { return nil }
        if bytes.writerIndex == at + Int(length) {
            pending = nil
        } else {
            pending?.moveReaderIndex(to: at + Int(length))
        }
        if let key { Self.unmask(&payload, key: key) }
        return Frame(fin: fin, opcode: first & 0x0F, payload: payload)
    }

    /// XORs `payload` with the 4-byte masking key, in the key's network order (RFC 6455 §5.3).
    static func unmask(_ payload: inout ByteBuffer, key: UInt32) {
        payload.withUnsafeMutableReadableBytes { bytes in
            for i in bytes.indices { bytes[i] ^= UInt8(truncatingIfNeeded: key >> (24 - 8 * UInt32(i & 3))) }
        }
    }
}

/// Encodes the frames the server sends (RFC 6455 §5.2: unmasked, whole) into one buffer with
/// their header, written to the socket as it is — no encoder handler in the pipeline, which
/// would hold an object, a context and a header buffer for every connection, and write each
/// frame's header and payload as two buffers.
@_spi(HearthInternals) public enum FrameWriter {
    static let text: UInt8 = 0x1
    static let close: UInt8 = 0x8
    static let pong: UInt8 = 0xA

    /// A frame of `opcode` carrying `text` in UTF-8.
    static func frame(_ opcode: UInt8, text: String, allocator: ByteBufferAllocator) -> ByteBuffer {
        let length = text.utf8.count
        var buffer = allocator.buffer(capacity: headerBytes(length) + length)
        writeHeader(opcode, length: length, into: &buffer)
        buffer.writeString(text)
        return buffer
    }

    /// A frame of `opcode` carrying `payload`.
    public static func frame(_ opcode: UInt8, payload: ByteBuffer, allocator: ByteBufferAllocator) -> ByteBuffer {
        let length = payload.readableBytes
        var buffer = allocator.buffer(capacity: headerBytes(length) + length)
        writeHeader(opcode, length: length, into: &buffer)
        buffer.writeImmutableBuffer(payload)
        return buffer
    }

    /// A close frame carrying `status` (RFC 6455 §5.5.1).
    static func close(status: UInt16, allocator: ByteBufferAllocator) -> ByteBuffer {
        var buffer = allocator.buffer(capacity: 4)
        writeHeader(close, length: 2, into: &buffer)
        buffer.writeInteger(status)
        return buffer
    }

    /// The header's size for a payload of `length` bytes, unmasked.
    static func headerBytes(_ length: Int) -> Int { length <= 125 ? 2 : length <= 0xFFFF ? 4 : 10 }

    static func writeHeader(_ opcode: UInt8, length: Int, into buffer: inout ByteBuffer) {
        buffer.writeInteger(0x80 | opcode)
        if length <= 125 {
            buffer.writeInteger(UInt8(length))
        } else if length <= 0xFFFF {
            buffer.writeInteger(UInt8(126))
            buffer.writeInteger(UInt16(length))
        } else {
            buffer.writeInteger(UInt8(127))
            buffer.writeInteger(UInt64(length))
        }
    }
}
