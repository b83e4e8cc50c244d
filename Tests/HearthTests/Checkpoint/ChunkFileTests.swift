import Foundation
@_spi(HearthInternals) import HearthLog
import HearthModel
import HearthTesting
import Testing
@_spi(HearthInternals) @testable import Hearth

/// A checkpoint references its unchanged chunks where they are, in earlier checkpoint files
/// (FORMAT.md §6, §7.1), instead of copying them: the new file holds what changed, the MANIFEST
/// keeps the files it reads, reopening reads the same state, damage in a referenced chunk is
/// reported, and the dead bytes of kept files stay bounded (Store+ChunkFiles.swift).
@Suite struct ChunkFileTests {
    func eagerOptions(_ fs: SimulatedFileSystem) -> Store.Options {
        var o = options(fs)
        o.lazyCacheLoad = false
        return o
    }

    func counters(_ store: Store) -> ResidentCache.Counters { store.resident.counters.withLock { $0 } }

    /// 40 chat rooms (~1.4 MB raw, split into range chunks of ~2 rooms each), checkpointed.
    func roomsStore(_ fs: SimulatedFileSystem) throws -> Store {
        let store = try Store.open(directory: "/db", options: eagerOptions(fs))
        for room in 0..<40 {
            try store.applyServerOverwrite(Gen.chatRoom(room), at: Path(keys: ["rooms", ChildKey("r\(room)")]))
        }
        try store.compact()
        return store
    }

    @Test func aCheckpointWritesOnlyWhatChangedBesideTheFilesItKeeps() throws {
        let fs = SimulatedFileSystem(seed: 81)
        let store = try roomsStore(fs)
        // (The first checkpoint was written while the rooms arrived; compact's references it.)
        let first = try #require(store.log.checkpoint)
        let firstBytes = first.bodySize + first.referencedBytes
        try store.applyServerOverwrite(.string("changed"), at: "rooms/r5/m1010/text")
        let expected = try store.state()
        try store.compact()
        let second = try #require(store.log.checkpoint)
        #expect(second.referenced.map(\.id).contains(first.id), "the previous file is kept, not copied")
        #expect(second.bodySize * 8 < firstBytes, "\(second.bodySize) of \(firstBytes)")
        #expect(counters(store).referencedChunks >= 15, "\(counters(store))")
        let files = fs.fileNames(in: "/db").filter { $0.hasPrefix("ckpt-") }
        #expect(Set(files) == Set(([second] + second.referenced).map(\.fileName)))
        try store.close()

        // Reopened: the same state, every chunk of every file verified (`hearth verify`).
        let reopened = try Store.open(directory: "/db", options: options(fs))
        #expect(try reopened.state().serverCache == expected.serverCache)
        try reopened.close()
        let checkpoint = try #require(try Log.openCheckpoint(directory: "/db", fileSystem: fs))
        #expect(checkpoint.referenced.map(\.id) == second.referenced.map(\.id))
        #expect(try Store.verifyCheckpoint(checkpoint) >= 20)
    }

    /// A referenced chunk whose bytes are damaged fails its CRC: a typed error naming the file
    /// that holds it, from a read and from verify — never a wrong value.
    @Test func aDamagedReferencedChunkIsReportedNotMisread() throws {
        let fs = SimulatedFileSystem(seed: 82)
        let store = try roomsStore(fs)
        try store.applyServerOverwrite(.string("changed"), at: "rooms/r5/m1010/text")
        try store.compact()
        let checkpoint = try #require(store.log.checkpoint)
        let older = try #require(checkpoint.referenced.first)
        let reader = try CheckpointReader(checkpoint)
        let referenced = try #require(reader.directory.chunks.first { $0.file == older.id && $0.path != .root })
        try store.close()

        let path = "/db/" + older.fileName
        var bytes = try #require(fs.contents(of: path))
        bytes[64 + Int(referenced.offset) + referenced.storedLength / 2] ^= 0x10
        fs.setContents(of: path, to: bytes)

        let reopened = try Store.open(directory: "/db", options: options(fs))
        var target = referenced.path
        if case .range(let first, _) = referenced.kind { target = target.child(first) }
        do {
            let value = try reopened.serverValue(at: target)
            Issue.record("read a damaged chunk as \(value)")
        } catch {
            #expect("\(error)".contains(older.fileName), "\(error)")
        }
        try? reopened.close()
        let opened = try #require(try Log.openCheckpoint(directory: "/db", fileSystem: fs))
        #expect(throws: StoreError.self) { _ = try Store.verifyCheckpoint(opened) }
    }

    /// Incremental checkpoints over changes here and there, each reopened: the state read is
    /// the model's, and the files kept hold at most a tenth of the cap in dead bytes beyond what
    /// the latest checkpoint itself wrote outside its chunks.
    @Test func reopenAfterIncrementalCheckpointsReadsTheModel() throws {
        let fs = SimulatedFileSystem(seed: 83)
        var store = try roomsStore(fs)
        var rng = SeededRandom(seed: 83)
        var referencedAtSomePoint = 0
        for round in 0..<12 {
            for _ in 0..<Int(1 + rng.next() % 4) {
                let room = Int(rng.next() % 44)
                if rng.next() % 3 == 0 {
                    try store.applyServerOverwrite(
                        Gen.chatRoom(room + round), at: Path(keys: ["rooms", ChildKey("r\(room)")]))
                } else {
                    let m = 1000 + Int(rng.next() % 200)
                    try store.applyServerOverwrite(
                        .string("round \(round)"),
                        at: Path(keys: ["rooms", ChildKey("r\(room)"), ChildKey("m\(m)"), "text"]))
                }
            }
            let expected = try store.state()
            try store.compact()
            let checkpoint = try #require(store.log.checkpoint)
            referencedAtSomePoint = max(referencedAtSomePoint, checkpoint.referenced.count)
            let reader = try CheckpointReader(checkpoint)
            var live: [UInt64: UInt64] = [:]
            for c in reader.directory.chunks {
                live[c.fileID(own: checkpoint.id), default: 0] += UInt64(c.storedLength)
            }
            let dead = checkpoint.referenced.reduce(UInt64(0)) { $0 + $1.bodySize - (live[$1.id] ?? 0) }
            #expect(
                Double(dead) <= Double(Store.defaultCacheSize) * Store.deadShare + Double(checkpoint.bodySize),
                "round \(round): \(dead) dead bytes in \(checkpoint.referenced.count) kept files")
            try store.close()
            store = try Store.open(directory: "/db", options: eagerOptions(fs))
            #expect(try store.state().serverCache == expected.serverCache, "round \(round)")
        }
        #expect(referencedAtSomePoint >= 1)
        try store.close()
    }

    /// The plan takes the files with the most dead bytes first, and only until the rest are
    /// within the budget.
    @Test func compactionTakesTheDeadestFilesUntilWithinTheBudget() {
        func chunk(_ file: UInt64, _ stored: Int) -> CheckpointFormat.Chunk {
            CheckpointFormat.Chunk(
                path: "a", kind: .whole, offset: 0, storedLength: stored, rawLength: stored, compressed: false, crc: 0,
                file: file)
        }
        // Own file 9 (file 0 in its entries): 100 bytes, 90 live. File 3: 1,000, 100 live.
        // File 5: 500, 200 live.
        let files: [(id: UInt64, size: UInt64)] = [(9, 100), (3, 1000), (5, 500)]
        let chunks = [chunk(0, 90), chunk(3, 100), chunk(5, 200)]
        #expect(Store.compactionPlan(files: files, chunks: chunks, own: 9, budget: 2000).isEmpty)
        #expect(Store.compactionPlan(files: files, chunks: chunks, own: 9, budget: 400) == [3])
        #expect(Store.compactionPlan(files: files, chunks: chunks, own: 9, budget: 200) == [3, 5])
        #expect(Store.compactionPlan(files: files, chunks: chunks, own: 9, budget: 0) == [3, 5, 9])
    }

    /// Within the dead-byte budget, the plan still bounds the number of files referenced,
    /// compacting those with the fewest live bytes.
    @Test func compactionBoundsTheNumberOfFiles() {
        func chunk(_ file: UInt64, _ stored: Int) -> CheckpointFormat.Chunk {
            CheckpointFormat.Chunk(
                path: "a", kind: .whole, offset: 0, storedLength: stored, rawLength: stored, compressed: false, crc: 0,
                file: file)
        }
        // 40 files of 100 bytes, file k with 60 + k live (all nearly full): no dead-byte pressure.
        let files: [(id: UInt64, size: UInt64)] = (1...40).map { (UInt64($0), 100) }
        let chunks = (1...40).map { chunk(UInt64($0), 60 + $0) }
        let plan = Store.compactionPlan(files: files, chunks: chunks, own: 99, budget: 1 << 20)
        #expect(plan == Set((1...UInt64(40 - Store.maxReferencedFiles)).map { $0 }))
        #expect(Store.compactionPlan(files: Array(files.prefix(5)), chunks: chunks, own: 99, budget: 1 << 20).isEmpty)
    }
}
