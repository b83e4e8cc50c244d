// Bit rot: flips in sealed segments, the checkpoint and the MANIFEST give typed errors naming the
// file (salvage mode keeps the valid prefix and moves damaged files aside), never a crash and never
// a silently shortened history.
import Testing
@_spi(HearthInternals) @testable import HearthLog
import HearthModel
import HearthTesting

/// Builds a store with a checkpoint and several segments; returns the fs and the full history.
func buildCorruptionStore(seed: UInt64) throws -> (SimulatedFileSystem, [[UInt8]]) {
    let fs = SimulatedFileSystem(seed: seed)
    let log = try Log.open(directory: storeDir, fileSystem: fs, options: .test())
    var history: [[UInt8]] = []
    for i in 0..<90 {
        let p = jsonPayload(i, seed: seed, extra: 12)
        _ = try log.append(p, type: 1)
        history.append(p)
        if i == 29 { try log.installCheckpoint(lsn: 30, body: encodeBody(history)) }
    }
    try log.close()
    return (fs, history)
}

@Suite struct CorruptionTests {
    @Test func bitFlipsAnywhereGiveTypedErrorsNeverSilentLoss() throws {
        let seed: UInt64 = 0xB17F
        let (base, history) = try buildCorruptionStore(seed: seed)
        let names = base.fileNames(in: storeDir).filter { $0 != "LOCK" }
        let segments = names.filter { $0.hasPrefix("seg-") }.sorted()
        #expect(segments.count >= 4 && names.contains { $0.hasPrefix("ckpt-") })
        var g = SeededRandom(seed: seed)
        var outcomes: [String: Int] = [:]
        for iteration in 0..<240 {
            let (fs, _) = try buildCorruptionStore(seed: seed)
            let name = names[Int(g.next() % UInt64(names.count))]
            var bytes = try #require(fs.contents(of: "\(storeDir)/\(name)"))
            let at = Int(g.next() % UInt64(bytes.count))
            bytes[at] ^= UInt8(1) << (g.next() % 8)
            fs.setContents(of: "\(storeDir)/\(name)", to: bytes)
            let ctx = "seed \(seed) iteration \(iteration): flipped \(name) @\(at)"
            let isLastSegment = name == segments.last
            let isCheckpointBody = name.hasPrefix("ckpt-") && at >= 64
            do {
                let log = try Log.open(directory: storeDir, fileSystem: fs, options: .test())
                if isCheckpointBody {
                    // Opening verifies only the header; the body checksum catches the flip.
                    #expect(throws: LogError.self, "\(ctx)") { try log.checkpoint!.readBody() }
                    outcomes["checkpoint body: caught by readBody", default: 0] += 1
                } else {
                    // Only the last segment's final records may be cut (an unvouched torn tail).
                    #expect(isLastSegment, "open succeeded after damage outside the tail: \(ctx)")
                    let h = try recoveredHistory(log)
                    #expect(h == Array(history.prefix(h.count)), "\(ctx)")
                    #expect(log.recovery.truncatedTail != nil || h.count == history.count, "\(ctx)")
                    outcomes["last segment: tail cut", default: 0] += 1
                }
                try log.close()
            } catch let e as LogError {
                #expect(e.isCorruption, "not a corruption error: \(e) — \(ctx)")
                #expect(e.file == name, "error names \(String(describing: e.file)), flipped \(name): \(ctx)")
                outcomes["\(name.prefix(4)): typed error", default: 0] += 1
                // The verifier reports the same damage without modifying anything.
                let report = try Log.verify(directory: storeDir, fileSystem: fs)
                #expect(report.damage?.error == e, "\(ctx)")
                #expect(fs.contents(of: "\(storeDir)/\(name)") == bytes, "verifier wrote: \(ctx)")
            }
        }
        print("bit flips: \(outcomes.sorted { $0.key < $1.key })")
    }

    @Test func salvageKeepsValidPrefixAndMovesDamagedFilesAside() throws {
        let seed: UInt64 = 0x5A17
        var g = SeededRandom(seed: seed)
        for iteration in 0..<40 {
            let (fs, history) = try buildCorruptionStore(seed: seed)
            let segments = fs.fileNames(in: storeDir).filter { $0.hasPrefix("seg-") }.sorted()
            let victim = segments[Int(g.next() % UInt64(segments.count - 1))]  // a sealed one
            var bytes = try #require(fs.contents(of: "\(storeDir)/\(victim)"))
            let at = 64 + Int(g.next() % UInt64(bytes.count - 64))
            bytes[at] ^= 0x10
            fs.setContents(of: "\(storeDir)/\(victim)", to: bytes)
            let ctx = "seed \(seed) iteration \(iteration): \(victim) @\(at)"
            #expect(throws: LogError.self, "\(ctx)") {
                try Log.open(directory: storeDir, fileSystem: fs, options: .test())
            }
            let log = try Log.open(directory: storeDir, fileSystem: fs, options: .test(salvage: true))
            let salvaged = try #require(log.recovery.salvaged, "\(ctx)")
            #expect(salvaged.damage.file == victim, "\(ctx)")
            #expect(salvaged.movedAside.contains(victim + ".broken"), "\(ctx)")
            #expect(fs.contents(of: "\(storeDir)/\(victim).broken") == bytes, "moved aside intact: \(ctx)")
            let h = try recoveredHistory(log)
            #expect(h.count >= 30 && h.count < history.count && h == Array(history.prefix(h.count)), "\(ctx)")
            // The salvaged store is clean, appendable and keeps its .broken files on reopen.
            #expect(try log.append([1, 2, 3], type: 1) == LSN(h.count + 1))
            try log.close()
            let again = try Log.open(directory: storeDir, fileSystem: fs, options: .test())
            #expect(try recoveredHistory(again).count == h.count + 1, "\(ctx)")
            #expect(fs.fileNames(in: storeDir).contains(victim + ".broken"), "\(ctx)")
            try again.close()
        }
    }

    @Test func salvageRebuildsDamagedManifestAndSetsAsideDamagedCheckpoint() throws {
        // MANIFEST: rebuilt from the files present; nothing is lost.
        var (fs, history) = try buildCorruptionStore(seed: 8)
        var m = fs.contents(of: "\(storeDir)/MANIFEST")!
        m[20] ^= 4
        fs.setContents(of: "\(storeDir)/MANIFEST", to: m)
        #expect(
            throws: LogError.corruption(
                file: "MANIFEST", offset: UInt64(m.count - 4), reason: "MANIFEST checksum mismatch")
        ) {
            try Log.open(directory: storeDir, fileSystem: fs, options: .test())
        }
        var log = try Log.open(directory: storeDir, fileSystem: fs, options: .test(salvage: true))
        #expect(log.recovery.salvaged?.movedAside == ["MANIFEST.broken"])
        #expect(try recoveredHistory(log) == history)
        #expect(fs.contents(of: "\(storeDir)/MANIFEST.broken") == m)
        try log.close()
        // Checkpoint header: moved aside; the log keeps only what replays from LSN 1 (here nothing,
        // as the checkpoint had retired the early segments), every file kept as *.broken.
        (fs, history) = try buildCorruptionStore(seed: 8)
        let ckpt = fs.fileNames(in: storeDir).first { $0.hasPrefix("ckpt-") }!
        var c = fs.contents(of: "\(storeDir)/\(ckpt)")!
        c[30] ^= 1
        fs.setContents(of: "\(storeDir)/\(ckpt)", to: c)
        #expect(throws: LogError.corruption(file: ckpt, offset: 0, reason: "checkpoint header checksum mismatch")) {
            try Log.open(directory: storeDir, fileSystem: fs, options: .test())
        }
        let before = fs.fileNames(in: storeDir).filter { $0 != "LOCK" }
        log = try Log.open(directory: storeDir, fileSystem: fs, options: .test(salvage: true))
        let h = try recoveredHistory(log)
        #expect(h == Array(history.prefix(h.count)))
        let after = Set(fs.fileNames(in: storeDir))
        for n in before { #expect(after.contains(n + ".broken") || after.contains(n), "\(n) kept") }
        try log.close()
    }

    @Test func damagedLastRecordIsTornButVouchedDamageIsCorruption() throws {
        func store() throws -> (SimulatedFileSystem, [RecordInfo]) {
            let fs = SimulatedFileSystem(seed: 11)
            let log = try Log.open(directory: storeDir, fileSystem: fs, options: .test(segmentSize: 1 << 20))
            for i in 0..<6 { _ = try log.append(jsonPayload(i), type: 1) }  // .full: each synced before the next
            try log.close()
            let report = try Log.verify(directory: storeDir, fileSystem: fs)
            return (fs, report.segments.last!.records)
        }
        // Damage in record 3 of the last segment; records 4–6 say LSN 3 had been synced: corruption.
        var (fs, recs) = try store()
        let seg = "\(storeDir)/\(recs[2].file)"
        var b = fs.contents(of: seg)!
        b[Int(recs[2].offset) + 40] ^= 1
        fs.setContents(of: seg, to: b)
        #expect(
            throws: LogError.corruption(
                file: recs[2].file, offset: recs[2].offset,
                reason:
                    "record checksum mismatch; the record at \(recs[3].offset) shows LSN 3 had been synced")
        ) {
            try Log.open(directory: storeDir, fileSystem: fs, options: .test(segmentSize: 1 << 20))
        }
        // Damage in the final record: nothing vouches for it, so it is a torn tail.
        (fs, recs) = try store()
        b = fs.contents(of: seg)!
        b[Int(recs[5].offset) + 40] ^= 1
        fs.setContents(of: seg, to: b)
        let log = try Log.open(directory: storeDir, fileSystem: fs, options: .test(segmentSize: 1 << 20))
        #expect(log.lastLSN == 5)
        #expect(log.recovery.truncatedTail?.offset == recs[5].offset)
        #expect(try log.append([1], type: 1) == 6)
    }

    @Test func unknownVersionMissingFilesAndMissingManifest() throws {
        var (fs, _) = try buildCorruptionStore(seed: 5)
        var segments = fs.fileNames(in: storeDir).filter { $0.hasPrefix("seg-") }.sorted()
        var b = fs.contents(of: "\(storeDir)/\(segments[1])")!
        b[8] = 7
        fs.setContents(of: "\(storeDir)/\(segments[1])", to: b)
        #expect(throws: LogError.unsupportedVersion(file: segments[1], offset: 8, version: 7)) {
            try Log.open(directory: storeDir, fileSystem: fs, options: .test())
        }
        (fs, _) = try buildCorruptionStore(seed: 5)
        segments = fs.fileNames(in: storeDir).filter { $0.hasPrefix("seg-") }.sorted()
        try fs.unlink("\(storeDir)/\(segments[2])")
        #expect(throws: LogError.missingFile(file: segments[2])) {
            try Log.open(directory: storeDir, fileSystem: fs, options: .test())
        }
        (fs, _) = try buildCorruptionStore(seed: 5)
        try fs.unlink("\(storeDir)/MANIFEST")
        #expect(throws: LogError.manifestMissing(path: storeDir)) {
            try Log.open(directory: storeDir, fileSystem: fs, options: .test())
        }
        #expect(fs.fileNames(in: storeDir).contains(segments[0]), "nothing deleted when refusing to open")
    }

    @Test func leftoverTempAndStrayFilesAreRemovedOnOpen() throws {
        let (fs, history) = try buildCorruptionStore(seed: 6)
        for name in [
            "MANIFEST.tmp", "ckpt-00000000000000aa.ckpt.tmp", "seg-00000000000000ff.log", "ckpt-0000000000000099.ckpt",
        ] {
            let f = try fs.open("\(storeDir)/\(name)", mode: .createTruncate)
            try f.write([1, 2, 3], at: 0)
        }
        let log = try Log.open(directory: storeDir, fileSystem: fs, options: .test())
        #expect(Set(log.recovery.removedTempFiles) == ["MANIFEST.tmp", "ckpt-00000000000000aa.ckpt.tmp"])
        #expect(Set(log.recovery.removedStrayFiles) == ["seg-00000000000000ff.log", "ckpt-0000000000000099.ckpt"])
        #expect(try recoveredHistory(log) == history)
        let names = Set(fs.fileNames(in: storeDir))
        #expect(names.isDisjoint(with: ["MANIFEST.tmp", "seg-00000000000000ff.log", "ckpt-0000000000000099.ckpt"]))
        let fp = try log.footprint()
        #expect(fp.total == fp.files.reduce(0) { $0 + $1.bytes })
        #expect(Set(fp.files.map(\.name)) == names.subtracting(["LOCK"]))
    }
}

@Suite struct HostileInputTests {
    /// Arbitrary bytes in place of (or truncating, or extending) any file: open and verify return a
    /// typed error or a consistent store, and never crash, hang or allocate unboundedly.
    @Test func arbitraryFileContentsNeverCrash() throws {
        let seed: UInt64 = 0xF022
        var g = SeededRandom(seed: seed)
        var outcomes: [String: Int] = [:]
        for iteration in 0..<150 {
            let (fs, history) = try buildCorruptionStore(seed: seed)
            let names = fs.fileNames(in: storeDir).filter { $0 != "LOCK" }
            let name = names[Int(g.next() % UInt64(names.count))]
            var bytes = fs.contents(of: "\(storeDir)/\(name)")!
            switch g.next() % 5 {
            case 0: bytes = Array(bytes.prefix(Int(g.next() % UInt64(bytes.count + 1))))
            case 1: bytes = randomBytes(Int(g.next() % 5000), seed: g.next())
            case 2: bytes += randomBytes(Int(g.next() % 300) + 1, seed: g.next())
            case 3:  // plausible-looking header fields with huge values
                let at = Int(g.next() % UInt64(max(1, bytes.count - 8)))
                for k in 0..<min(8, bytes.count - at) { bytes[at + k] = 0xFF }
            default:  // overwrite a region with zeros
                let at = Int(g.next() % UInt64(bytes.count))
                for k in at..<min(bytes.count, at + Int(g.next() % 700)) { bytes[k] = 0 }
            }
            fs.setContents(of: "\(storeDir)/\(name)", to: bytes)
            for salvage in [false, true] {
                do {
                    let log = try Log.open(directory: storeDir, fileSystem: fs, options: .test(salvage: salvage))
                    if let h = try? recoveredHistory(log) {
                        #expect(h == Array(history.prefix(h.count)), "seed \(seed) iteration \(iteration) \(name)")
                    }
                    try? log.close()
                    outcomes[salvage ? "salvage opened" : "opened", default: 0] += 1
                } catch {
                    #expect(error.isCorruption || salvage, "seed \(seed) iteration \(iteration) \(name): \(error)")
                    outcomes[salvage ? "salvage refused" : "typed error", default: 0] += 1
                }
            }
            _ = try? Log.verify(directory: storeDir, fileSystem: fs)
        }
        print("hostile input: \(outcomes.sorted { $0.key < $1.key })")
    }
}
