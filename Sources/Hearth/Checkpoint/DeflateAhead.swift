import Dispatch
@_spi(HearthInternals) import HearthLog
import HearthModel

// Deflating a checkpoint's cache chunks on a second thread, ahead of the walk that encodes them.
//
// A checkpoint's cost is two steps per chunk: the walk that encodes its nodes, and zlib, which
// compresses the encoding (zlib is half to two thirds of it: 54% of the maintenance samples in
// the 50 MiB fill, 0.195 of 0.28 s for the checkpoint of CheckpointCostTests' cache).
// Run one after the other, they leave a second core idle. So the walk hands each chunk's raw
// bytes to one worker queue and goes on with the next chunk, and the chunks are written, by the
// walk's own thread, in order, as their compressed bytes come back: a checkpoint then takes
// about as long as its zlib alone. The store does this for the checkpoints a caller waits for
// (close's, `compact()`'s): beside writers, which have the other core, a third runnable thread
// costs CPU and gains nothing (Store.writeCheckpoint).
//
// The bytes written are exactly the synchronous encoder's: every chunk is one raw DEFLATE stream
// of its own at the same level (FORMAT.md §7.1), so where it is compressed changes nothing; the
// order is the walk's; the offsets, CRCs and the directory follow from the stored bytes in the
// same way. DeflateAheadTests compares the two byte for byte.
//
// Bounds: at most `depth` + 1 chunks wait unwritten (each at most a chunk target of raw bytes, or
// a node larger than one; and its compressed bytes), so a checkpoint's memory stays a few
// chunks. The walk waits for the oldest chunk when more than `depth` are in flight; the worker
// never waits for the walk. A chunk smaller than `asyncMinimum` is compressed on the walk's thread: handing
// it over would cost more than compressing it.
//
// A failed write ends the encoding with the jobs still queued: they finish on the worker and are
// dropped (they hold only their own bytes).

/// A chunk's bytes as stored in a checkpoint: compressed or raw, and the masked CRC-32C of the
/// stored bytes (FORMAT.md §7.1's directory entry).
struct StoredChunk: Sendable {
    var bytes: [UInt8]
    var compressed: Bool
    var crc: UInt32

    /// `raw` stored at zlib `level`: compressed when that saves enough, else raw.
    init(deflating raw: [UInt8], level: Int32) {
        let (stored, compressed) = CheckpointEncoder.store(raw, level: level)
        assert(!compressed || stored.count < raw.count, "a chunk is stored compressed only when that is smaller")
        self.init(bytes: stored, compressed: compressed, crc: CRC32C.mask(CRC32C.checksum(stored)))
    }

    init(bytes: [UInt8], compressed: Bool, crc: UInt32) {
        self.bytes = bytes
        self.compressed = compressed
        self.crc = crc
    }
}

/// One chunk compressed on the worker queue.
///
/// `@unchecked Sendable`: `raw` and `level` are immutable; `result` is written once, by the
/// worker, before `done` is signalled, and read only by the owner after it has waited on `done`
/// (the semaphore orders the two).
final class DeflateJob: @unchecked Sendable {
    private let raw: [UInt8]
    private let level: Int32
    private var result: StoredChunk?
    private let done = DispatchSemaphore(value: 0)
    /// Owner only: `done` was consumed.
    private var finished = false

    init(_ raw: [UInt8], level: Int32) {
        self.raw = raw
        self.level = level
    }

    /// [worker] Compresses the chunk and signals.
    func run() {
        result = StoredChunk(deflating: raw, level: level)
        done.signal()
    }

    /// [owner] Whether the worker has finished (without waiting).
    var isDone: Bool {
        if !finished, done.wait(timeout: .now()) == .success { finished = true }
        return finished
    }

    /// [owner] The stored chunk, waiting for the worker if need be.
    func wait() -> StoredChunk {
        if !finished {
            done.wait()
            finished = true
        }
        guard let result else { preconditionFailure("a deflate job signals only after its result is set") }
        return result
    }
}

/// The chunks a checkpoint has encoded (or chosen to copy) but not yet written, oldest first,
/// with the worker that compresses them. See the file's comment.
struct DeflateAhead<Pending> {
    /// A chunk's stored bytes: known, or being compressed on the worker.
    enum Bytes {
        case ready(StoredChunk)
        case deflating(DeflateJob)
    }

    /// Raw chunks shorter than this are compressed on the walk's thread.
    static var asyncMinimum: Int { 8 * 1024 }

    /// How many chunks may wait unwritten before the walk waits for the oldest (0: every chunk
    /// is compressed on the walk's thread and written at once).
    let depth: Int
    private let level: Int32
    private let worker: DispatchQueue?
    /// Oldest first; at most `depth + 1` between two calls of ``next(all:)`` that drain it.
    private var queue: [(Bytes, Pending)] = []

    /// `worker`: the serial queue to compress on (tests hold one suspended); a new one when nil.
    init(depth: Int, level: Int32, worker: DispatchQueue? = nil) {
        precondition(depth >= 0, "a negative deflate-ahead depth")
        self.depth = depth
        self.level = level
        self.worker = depth > 0 ? worker ?? DispatchQueue(label: "hearth.checkpoint.deflate") : nil
    }

    /// Starts compressing `raw` (on the worker when there is one and the chunk is large enough).
    func deflate(_ raw: [UInt8]) -> Bytes {
        guard let worker, raw.count >= Self.asyncMinimum else {
            return .ready(StoredChunk(deflating: raw, level: level))
        }
        let job = DeflateJob(raw, level: level)
        worker.async { job.run() }
        return .deflating(job)
    }

    /// Queues a chunk behind the ones already waiting.
    mutating func append(_ bytes: Bytes, _ pending: Pending) {
        // The bound: the encoder drains with ``next(all:)`` after every append, which leaves at
        // most `depth` waiting.
        assert(queue.count <= depth, "a chunk queued before the queue was drained to its depth")
        queue.append((bytes, pending))
    }

    /// The oldest chunk, to be written now: when its bytes are ready, or — waiting for them —
    /// when more than ``depth`` chunks wait (or `all`, at the end). Nil when the oldest may wait.
    mutating func next(all: Bool = false) -> (StoredChunk, Pending)? {
        guard let (bytes, pending) = queue.first else { return nil }
        let stored: StoredChunk
        switch bytes {
        case .ready(let chunk): stored = chunk
        case .deflating(let job):
            guard job.isDone || all || queue.count > depth else { return nil }
            stored = job.wait()
        }
        queue.removeFirst()
        return (stored, pending)
    }
}
