// Raw DEFLATE (RFC 1951) through the system zlib: no zlib or gzip wrapper, window bits -15.
//
// One long-lived z_stream per Deflater, reset per record with deflateReset: deflateInit allocates about
// 256 KiB, which would cost ~10x per record if done every time. A z_stream must not move in memory
// (zlib keeps a back pointer to it and checks it), so it lives in a heap allocation.
import CZlib

/// The codec ids that may appear in a segment header (FORMAT.md §4).
enum Codec {
    /// Raw DEFLATE, RFC 1951. Records flagged `compressed` hold one complete raw DEFLATE stream.
    static let rawDeflate: UInt8 = 1
}

/// Compresses payloads. Not thread-safe: used by one thread at a time, handed between threads only
/// through ``DeflaterPool``'s lock (hence `@unchecked Sendable`).
final class Deflater: @unchecked Sendable {
    private let stream: UnsafeMutablePointer<z_stream>

    /// - Parameters:
    ///   - windowBits: log2 of the window, 9…15. Any raw DEFLATE stream decodes with the
    ///     largest window, so smaller ones are purely a writer's choice.
    ///   - memLevel: zlib's memory level, 1…9 (the hash table is 2^(memLevel+7) entries, cleared by
    ///     every `deflateReset`).
    init(level: Int32, windowBits: Int32 = 15, memLevel: Int32 = 8) {
        stream = .allocate(capacity: 1)
        stream.initialize(to: z_stream())
        let rc = deflateInit2_(
            stream, level, Z_DEFLATED, -windowBits, memLevel, Z_DEFAULT_STRATEGY,
            ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size))
        // Only fails on out-of-memory or a bad level; the level is validated by Log.Options.
        precondition(rc == Z_OK, "deflateInit2_ failed: \(rc)")
    }

    deinit {
        deflateEnd(stream)
        stream.deinitialize(count: 1)
        stream.deallocate()
    }

    /// Returns the raw DEFLATE stream of `input` if it is strictly smaller than `input`, else nil.
    func compress(_ input: [UInt8]) -> [UInt8]? {
        guard input.count >= 16 else { return nil }
        let rc0 = deflateReset(stream)
        precondition(rc0 == Z_OK)
        // The output buffer is one byte smaller than the input: if the stream does not end within it,
        // compression does not save space and the record is stored raw.
        let capacity = input.count - 1
        var out = [UInt8](repeating: 0, count: capacity)
        let produced: Int? = input.withUnsafeBufferPointer { inBuf in
            out.withUnsafeMutableBufferPointer { outBuf in
                stream.pointee.next_in = UnsafeMutablePointer(mutating: inBuf.baseAddress)
                stream.pointee.avail_in = uInt(inBuf.count)
                stream.pointee.next_out = outBuf.baseAddress
                stream.pointee.avail_out = uInt(outBuf.count)
                let rc = deflate(stream, Z_FINISH)
                defer {
                    stream.pointee.next_in = nil
                    stream.pointee.next_out = nil
                }
                return rc == Z_STREAM_END ? Int(stream.pointee.total_out) : nil
            }
        }
        guard let n = produced else { return nil }
        out.removeSubrange(n...)
        return out
    }
}

/// A small pool of deflaters so that concurrent appenders compress in parallel, each with a
/// long-lived stream.
final class DeflaterPool: Sendable {
    private let level: Int32
    /// Inputs shorter than this are never compressed (`Log.Options.rawPayloadLimit`).
    private let rawLimit: Int
    private let monitor = Monitor()
    /// Guarded by `monitor`. Bounded by the number of concurrently compressing threads.
    nonisolated(unsafe) private var idle: [Deflater] = []
    /// Deflaters for small inputs (guarded by `monitor` too).
    nonisolated(unsafe) private var idleSmall: [Deflater] = []

    /// Inputs up to this size use a 4 KiB window and a small hash table. `deflateReset` clears
    /// the whole hash table — 64 KiB at the default memory level — which costs more than
    /// compressing a few hundred bytes; a small window loses nothing on a small input.
    static let smallInput = 4096

    init(level: Int32, rawLimit: Int = 0) {
        self.level = level
        self.rawLimit = rawLimit
    }

    /// The raw DEFLATE stream of `input` when strictly smaller, else nil; always nil at level 0
    /// and for inputs shorter than `rawLimit` (payloads stored uncompressed).
    func compress(_ input: [UInt8]) -> [UInt8]? {
        if level == 0 || input.count < rawLimit { return nil }
        let small = input.count <= DeflaterPool.smallInput
        let d =
            monitor.withLock { small ? idleSmall.popLast() : idle.popLast() }
            ?? (small ? Deflater(level: level, windowBits: 12, memLevel: 3) : Deflater(level: level))
        defer {
            monitor.withLock {
                if small {
                    if idleSmall.count < 64 { idleSmall.append(d) }
                } else if idle.count < 64 {
                    idle.append(d)
                }
            }
        }
        return d.compress(input)
    }
}

/// Decompresses payloads; one per reader, reset per record.
final class Inflater {
    private let stream: UnsafeMutablePointer<z_stream>

    init() {
        stream = .allocate(capacity: 1)
        stream.initialize(to: z_stream())
        let rc = inflateInit2_(stream, -15, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size))
        precondition(rc == Z_OK, "inflateInit2_ failed: \(rc)")
    }

    deinit {
        inflateEnd(stream)
        stream.deinitialize(count: 1)
        stream.deallocate()
    }

    /// Inflates one complete raw DEFLATE stream that must decode to exactly `rawCount` bytes and
    /// consume all of `input`. Returns nil on any mismatch (the caller reports corruption).
    func decompress(_ input: [UInt8], rawCount: Int) -> [UInt8]? {
        guard rawCount > 0, !input.isEmpty else { return nil }
        let rc0 = inflateReset(stream)
        precondition(rc0 == Z_OK)
        var out = [UInt8](repeating: 0, count: rawCount)
        let ok: Bool = input.withUnsafeBufferPointer { inBuf in
            out.withUnsafeMutableBufferPointer { outBuf in
                stream.pointee.next_in = UnsafeMutablePointer(mutating: inBuf.baseAddress)
                stream.pointee.avail_in = uInt(inBuf.count)
                stream.pointee.next_out = outBuf.baseAddress
                stream.pointee.avail_out = uInt(outBuf.count)
                let rc = inflate(stream, Z_FINISH)
                defer {
                    stream.pointee.next_in = nil
                    stream.pointee.next_out = nil
                }
                return rc == Z_STREAM_END && stream.pointee.avail_in == 0
                    && Int(stream.pointee.total_out) == rawCount
            }
        }
        return ok ? out : nil
    }
}
