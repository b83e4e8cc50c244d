import Dispatch
import Foundation
@_spi(HearthInternals) import HearthLog
import HearthTesting
import Testing
@_spi(HearthInternals) @testable import Hearth

/// A checkpoint's cache chunks compressed on a second thread ahead of the walk
/// (DeflateAhead.swift) are written exactly as the walk's own thread writes them: the same
/// bytes, chunks, directory and summary, with encoded chunks and copies interleaved.
@Suite struct DeflateAheadTests {
    /// A state of 40 chat rooms (~1.3 MB raw: dozens of chunks of 8 KiB and more, which go to
    /// the worker) and a few small nodes (chunks under 8 KiB, compressed on the walk's thread).
    func state() -> StoreState {
        var state = StoreState()
        for room in 0..<40 {
            state.apply(
                .serverOverwrite(path: Path(keys: ["rooms", ChildKey("r\(room)")]), node: Gen.chatRoom(room), at: 1))
        }
        for i in 0..<5 {
            state.apply(
                .serverOverwrite(path: Path(keys: ["small", ChildKey("s\(i)")]), node: .number(Double(i)), at: 1))
        }
        return state
    }

    /// `state` encoded with `depth` chunks compressed ahead, on a worker held back for 50 ms
    /// (so that the walk runs ahead of it: chunks queue behind ones still compressing), with
    /// `reuse`; the write fails after `failAfter` writes.
    func encode(
        _ state: StoreState, depth: Int, reuse: ChunkOrigins? = nil, failAfter: Int? = nil
    ) -> (bytes: [UInt8], summary: CheckpointEncoder.Summary?) {
        struct Full: Error {}
        var encoder = CheckpointEncoder(compressionLevel: 6)
        encoder.deflateAhead = depth
        encoder.recordOrigins = true
        encoder.reuse = reuse
        let worker = DispatchQueue(label: "test.deflate")
        worker.suspend()
        DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(50)) { worker.resume() }
        encoder.deflateWorker = worker
        var bytes: [UInt8] = []
        var writes = 0
        let summary = try? encoder.encode(state) { (chunk: [UInt8]) throws(Full) in
            writes += 1
            if let failAfter, writes > failAfter { throw Full() }
            bytes += chunk
        }
        return (bytes, summary)
    }

    /// The two encodings are the same bytes, chunks and totals.
    func expectSame(
        _ a: (bytes: [UInt8], summary: CheckpointEncoder.Summary?),
        _ b: (bytes: [UInt8], summary: CheckpointEncoder.Summary?), _ what: String
    ) throws {
        let x = try #require(a.summary), y = try #require(b.summary)
        #expect(a.bytes == b.bytes, "\(what)")
        #expect(x.chunks == y.chunks, "\(what)")
        #expect(x.origins.count == y.origins.count, "\(what)")
        #expect(x.copiedChunks == y.copiedChunks && x.encodedChunks == y.encodedChunks, "\(what)")
        #expect(x.storedCacheBytes == y.storedCacheBytes && x.encodedRawBytes == y.encodedRawBytes, "\(what)")
    }

    @Test func theBytesAreTheWalkThreadsOwn() throws {
        let state = state()
        let plain = encode(state, depth: 0)
        let summary = try #require(plain.summary)
        #expect(summary.encodedChunks >= 20, "a walk of many chunks: \(summary.encodedChunks)")
        for depth in [1, 2, 4, 16] { try expectSame(encode(state, depth: depth), plain, "depth \(depth)") }
    }

    /// With the previous checkpoint's chunks to copy: the copies wait behind the encoded chunks
    /// before them (written at once, they would overtake those still compressing).
    @Test func copiesKeepTheirPlaceBetweenEncodedChunks() throws {
        var o = options(SimulatedFileSystem(seed: 7))
        o.lazyCacheLoad = false
        let store = try Store.open(directory: "/db", options: o)
        for room in 0..<40 {
            try store.applyServerOverwrite(Gen.chatRoom(room), at: Path(keys: ["rooms", ChildKey("r\(room)")]))
        }
        try store.compact()
        // Every fourth room changed: encoded chunks and copies alternate.
        for room in stride(from: 0, to: 40, by: 4) {
            try store.applyServerOverwrite(
                .string("changed"), at: Path(keys: ["rooms", ChildKey("r\(room)"), "m1010", "text"]))
        }
        let origins = try #require(store.core.withLock { $0.cacheOrigins })
        let state = try store.state()
        let plain = encode(state, depth: 0, reuse: origins)
        let summary = try #require(plain.summary)
        #expect(summary.copiedChunks >= 5 && summary.encodedChunks >= 5, "\(summary)")
        for depth in [1, 4] { try expectSame(encode(state, depth: depth, reuse: origins), plain, "depth \(depth)") }
        try store.close()
    }

    @Test func aFailedWriteEndsTheEncodingWithJobsInFlight() {
        let state = state()
        let (plain, _) = encode(state, depth: 0)
        for failAfter in [0, 1, 3, 10, 20] {
            let (bytes, summary) = encode(state, depth: 4, failAfter: failAfter)
            #expect(summary == nil, "fails after \(failAfter) writes")
            // What was written before the failure is the start of the full body, in order.
            #expect(Array(plain.prefix(bytes.count)) == bytes)
        }
    }

    /// Two stores, the same operations and clock, one compressing ahead and one on its
    /// maintenance thread: their checkpoints — whose later ones copy unchanged chunks of the
    /// earlier ones between the encoded ones — are the same files, byte for byte.
    @Test func checkpointsWithCopiesAreTheSameFiles() throws {
        func run(depth: Int) throws -> (files: [String: [UInt8]], counters: ResidentCache.Counters, state: StoreState) {
            let fs = SimulatedFileSystem(seed: 7)
            var o = options(fs)
            o.lazyCacheLoad = false
            o.checkpointDeflateAhead = depth
            let store = try Store.open(directory: "/db", options: o)
            for room in 0..<40 {
                try store.applyServerOverwrite(Gen.chatRoom(room), at: Path(keys: ["rooms", ChildKey("r\(room)")]))
            }
            try store.compact()
            for round in 0..<3 {
                try store.applyServerOverwrite(
                    .string("changed \(round)"),
                    at: Path(keys: ["rooms", ChildKey("r\(5 + 10 * round)"), "m1010", "text"]))
                try store.applyServerOverwrite(
                    json(#"{"a":\#(round)}"#), at: Path(keys: ["rooms", ChildKey("new\(round)")]))
                try store.compact()
            }
            let counters = store.resident.counters.withLock { $0 }
            let expected = try store.state()
            try store.close()
            var files: [String: [UInt8]] = [:]
            for name in try fs.listDirectory("/db") { files[name] = fs.contents(of: "/db/" + name) }
            // What the checkpoints hold reads back.
            let reopened = try Store.open(directory: "/db", options: o)
            let state = try reopened.state()
            #expect(state == expected, "depth \(depth)")
            try reopened.close()
            return (files, counters, state)
        }
        /// Where two runs' files differ: the file, its sizes and the first differing offset.
        func differences(_ a: [String: [UInt8]], _ b: [String: [UInt8]]) -> [String] {
            Set(a.keys).union(b.keys).sorted().compactMap { name -> String? in
                let x = a[name] ?? [], y = b[name] ?? []
                guard x != y else { return nil }
                let at = zip(x, y).enumerated().first { $0.element.0 != $0.element.1 }?.offset ?? min(x.count, y.count)
                return "\(name): \(x.count) and \(y.count) bytes, first difference at \(at)"
            }
        }
        let plain = try run(depth: 0)
        let again = try run(depth: 0)
        #expect(differences(again.files, plain.files) == [], "the same operations write the same files")
        let ahead = try run(depth: 4)
        #expect(plain.counters.copiedChunks >= 30, "the later checkpoints copy chunks: \(plain.counters)")
        #expect(ahead.counters.copiedChunks == plain.counters.copiedChunks, "\(ahead.counters) \(plain.counters)")
        #expect(ahead.counters.encodedChunks == plain.counters.encodedChunks, "\(ahead.counters) \(plain.counters)")
        #expect(differences(ahead.files, plain.files) == [], "\(ahead.counters) \(plain.counters)")
        #expect(ahead.state == plain.state)
    }
}
