// The FuzzFrames check: the raw bytes a WebSocket connection receives, in chunks, through the
// server's own frame reading — `FrameReader`, which cuts them into RFC 6455 frames and holds a frame's
// bytes until it is whole, and `FrameBoundaryScanner`, which follows the same boundaries without
// holding bytes so that the frame budget is reserved before the reader keeps them — and every frame
// read written back by `FrameWriter`; and its seeds.
// Fuzz/Sources/FuzzServerChecks is the one source of these checks: Tests/HearthServerTests/FuzzChecks/
// holds a symbolic link to each of its files (Fuzz/sync-checks.sh makes them; FuzzRegressionTests fails
// when a copy differs or is missing), so the fuzzers and `swift test` run one and the same code.
@_spi(HearthInternals) import HearthServer
import NIOCore

extension FuzzServerChecks {
    /// One frame as read, in values a test compares.
    struct ReadFrame: Equatable {
        var fin: Bool
        var opcode: UInt8
        var payload: [UInt8]
    }

    /// The input: one byte choosing the payload limit (0, 125, 1,000 or 70,000 bytes), one choosing
    /// the chunk size (1 to 97 bytes), then the stream, received in chunks of that size.
    ///
    /// Checks: no trap; every frame read is within the limit, a control frame whole and at most 125
    /// bytes; a refusal is 1009 (too long) or 1002 (a bad control frame), and one for its length
    /// comes at the chunk where the scanner found that length, never later nor earlier; after each
    /// chunk the reader holds at most the frame in progress — at most 13 bytes of a header, or the
    /// header and the payload the scanner announced — and has read the frames the scanner counted;
    /// the frames and the refusal are those of the same stream received whole; and each frame
    /// read, written by `FrameWriter`, reads back as itself (whole).
    static func frames(_ bytes: [UInt8]) {
        var input = Input(bytes)
        let limit = [0, 125, 1_000, 70_000][Int(input.u8() & 3)]
        let chunk = 1 + input.below(97)
        let stream = input.rest()
        let chunked = readFrames(stream, limit: limit, chunk: chunk)
        let whole = readFrames(stream, limit: limit, chunk: max(1, stream.count))
        check(
            chunked.frames == whole.frames && chunked.refusal == whole.refusal,
            "chunks of \(chunk) read \(chunked.frames.count) frames, refusal \(String(describing: chunked.refusal)); "
                + "the whole stream \(whole.frames.count), \(String(describing: whole.refusal))")
        for frame in chunked.frames { writeBack(frame) }
    }

    /// Reads `stream` received in chunks of `chunk` bytes, checking the reader against the scanner
    /// after each chunk: the frames read and the refusal, if any.
    static func readFrames(_ stream: [UInt8], limit: Int, chunk: Int) -> (frames: [ReadFrame], refusal: UInt16?) {
        var reader = FrameReader(maxPayloadBytes: limit)
        var scanner = FrameBoundaryScanner(maxPayloadBytes: limit)
        var frames: [ReadFrame] = []
        var start = 0
        while start < stream.count {
            let piece = Array(stream[start..<min(stream.count, start + chunk)])
            start += piece.count
            var scannerRefused = false
            do { try piece.withUnsafeBytes { raw in try scanner.scan(raw) } } catch { scannerRefused = true }
            var buffer = ByteBufferAllocator().buffer(bytes: piece)
            reader.append(&buffer)
            while true {
                let frame: FrameReader.Frame?
                do { frame = try reader.next() } catch {
                    check(error.status == 1009 || error.status == 1002, "refused with \(error.status)")
                    check(
                        error.status != 1009 || scannerRefused,
                        "the reader refused a frame's length the scanner let through in this chunk")
                    return (frames, error.status)
                }
                guard let frame else { break }
                let read = ReadFrame(fin: frame.fin, opcode: frame.opcode, payload: Array(buffer: frame.payload))
                check(read.payload.count <= limit, "a payload of \(read.payload.count) bytes passed the limit \(limit)")
                if read.opcode & 0x08 != 0 {
                    check(read.fin && read.payload.count <= 125, "a fragmented or long control frame was read")
                }
                frames.append(read)
            }
            check(!scannerRefused, "the scanner refused a length the reader did not refuse in the same chunk")
            check(scanner.completed == frames.count, "the scanner counted \(scanner.completed) frames, the reader read \(frames.count)")
            let held = reader.pending?.readableBytes ?? 0
            let bound = scanner.announced.map { $0 + 14 } ?? 13
            check(held <= bound, "the reader holds \(held) bytes; the frame in progress is at most \(bound)")
        }
        return (frames, nil)
    }

    /// `frame` written by the server's writer reads back as itself, whole (a writer's frames are
    /// never fragments).
    static func writeBack(_ frame: ReadFrame) {
        let allocator = ByteBufferAllocator()
        var written = FrameWriter.frame(frame.opcode, payload: allocator.buffer(bytes: frame.payload), allocator: allocator)
        var reader = FrameReader(maxPayloadBytes: max(frame.payload.count, 1))
        reader.append(&written)
        let again: FrameReader.Frame?
        do { again = try reader.next() } catch {
            return check(false, "a frame the writer wrote was refused with \(error.status)")
        }
        check(
            again.map { ReadFrame(fin: $0.fin, opcode: $0.opcode, payload: Array(buffer: $0.payload)) }
                == ReadFrame(fin: true, opcode: frame.opcode, payload: frame.payload),
            "a frame the writer wrote read back differently")
        check(reader.pending == nil, "the writer wrote more than one frame")
    }

    static func framesSeeds() -> [(String, [UInt8])] {
        /// A client's frame: FIN and `opcode`, masked with `key` (nil: unmasked), its length in the
        /// smallest encoding unless `long` asks for the 8-byte one.
        func frame(_ opcode: UInt8, _ payload: [UInt8], fin: Bool = true, key: [UInt8]? = [1, 2, 3, 4], long: Bool = false)
            -> [UInt8]
        {
            var out: [UInt8] = [(fin ? 0x80 : 0) | opcode]
            let mask: UInt8 = key == nil ? 0 : 0x80
            if long {
                out.append(mask | 127)
                out += (0..<8).map { UInt8(truncatingIfNeeded: UInt64(payload.count) >> (56 - 8 * UInt64($0))) }
            } else if payload.count <= 125 {
                out.append(mask | UInt8(payload.count))
            } else if payload.count <= 0xFFFF {
                out += [mask | 126, UInt8(payload.count >> 8), UInt8(payload.count & 0xFF)]
            } else {
                return frame(opcode, payload, fin: fin, key: key, long: true)
            }
            if let key {
                out += key
                out += payload.enumerated().map { $0.element ^ key[$0.offset & 3] }
            } else {
                out += payload
            }
            return out
        }
        let hello = Array(#"{"t":"d","d":{"r":1,"a":"q","b":{"p":"/a","h":""}}}"#.utf8)
        let big = Array(repeating: UInt8(ascii: "x"), count: 900)
        return [
            ("text", [2, 16] + frame(0x1, hello)),
            ("text-unmasked", [2, 5] + frame(0x1, hello, key: nil)),
            ("fragments", [2, 7] + frame(0x1, Array(hello[..<10]), fin: false) + frame(0x0, Array(hello[10...]))),
            ("ping-between", [2, 3] + frame(0x1, [0x7B], fin: false) + frame(0x9, [1, 2]) + frame(0x0, [0x7D])),
            ("close", [1, 1] + frame(0x8, [0x03, 0xE8]) + frame(0x1, hello)),
            ("medium", [2, 96] + frame(0x1, big)),
            ("long-encoding", [3, 40] + frame(0x2, big, long: true)),
            ("over-limit", [1, 9] + frame(0x1, big)),
            ("long-control", [2, 2] + frame(0x9, Array(big[..<126]))),
            ("fragmented-control", [2, 1] + frame(0xA, [1], fin: false)),
            ("huge-length", [3, 4] + [0x81, 0xFF] + Array(repeating: 0xFF, count: 8) + [1, 2, 3, 4]),
            ("zero-limit", [0, 2] + frame(0x1, []) + frame(0x9, []) + frame(0x1, [1])),
        ]
    }
}
