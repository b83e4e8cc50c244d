// The FuzzDecode check: a valid template store with one file replaced or patched by the input (segment,
// MANIFEST, checkpoint body, event batch or node) must open to a value or a typed error, agree with
// verify, and verify clean after an open or a salvage; and its seeds.
// Fuzz/Sources/FuzzChecks is the one source of these checks: Tests/HearthTests/FuzzChecks/ holds a
// symbolic link to each of its files (Fuzz/sync-checks.sh makes them; FuzzRegressionTests fails when a
// copy differs or is missing), so the fuzzers and `swift test` run one and the same code.
@_spi(HearthInternals) import Hearth
@_spi(HearthInternals) import HearthLog
import HearthModel
import HearthTesting

extension FuzzChecks {
    // MARK: - 1. Decode

    /// A valid store the engine wrote (checkpoint + log tail): file name → bytes.
    static let template: [String: [UInt8]] = {
        let fs = SimulatedFileSystem(seed: 2024)
        let clock = Clock()
        do {
            let store = try Store.open(directory: directory, options: storeOptions(fs, clock))
            var s = Source((0..<400).map { (i: Int) -> UInt8 in UInt8(truncatingIfNeeded: i &* 37 &+ 11) })
            try store.applyServerOverwrite(Node(children: [("a", .number(1)), ("b", .string("bee")), ("c", node(&s))]), at: "x")
            try store.applyServerOverwrite(Node(.string("big"), priority: .number(2)), at: "p/q")
            let w = try store.saveWrite(.set(.number(7)), at: "x/a")
            try store.saveWrite(.update([ChildUpdate(path: "d", node: Node(.serverValue(.timestamp)))]), at: "x")
            try store.trackQuery(at: QueryLocation(path: "x", query: try QuerySpec(orderBy: .value).limitToLast(2)), complete: true, active: true, keys: ["a", "b"])
            try store.keepSynced(QueryLocation(path: "p", query: .default), true)
            try store.saveAuth(AuthToken(token: "tok", expiresAt: 99))
            try store.enqueueTransaction(at: "x/a", functionName: "inc", argument: .number(1), localResult: .number(8))
            try store.queueOnDisconnect(.remove, at: "x/b")
            try store.setServerTimeOffset(-12.5)
            try store.compact()
            try store.ackWrite(w)
            try store.applyServerMerge([ChildUpdate(path: "a", node: .number(2)), ChildUpdate(path: "e/f", node: .bool(true))], at: "x")
            try store.applyServerOverwrite(.string(String(repeating: "compressible ", count: 20)), at: "long")
            try store.close()
        } catch {
            fatalError("cannot build the template store: \(error)")
        }
        var files: [String: [UInt8]] = [:]
        for name in fs.fileNames(in: directory) where name != "LOCK" {
            files[name] = fs.contents(of: directory + "/" + name)
        }
        return files
    }()

    static var templateSegment: String { template.keys.filter { $0.hasPrefix("seg-") }.max()! }
    static var templateCheckpoint: String { template.keys.first { $0.hasPrefix("ckpt-") }! }

    enum DecodeMode: Int, CaseIterable {
        case segmentRaw, segmentPatched, manifestRaw, manifestPatched, checkpointBody, checkpointDirectory
        case checkpointChunk, eventBatch, node
    }

    /// Applies patches `(u16 offset, u8 xor)…` from the input to `bytes`, then optionally truncates.
    static func patch(_ bytes: [UInt8], _ s: inout Source) -> [UInt8] {
        var out = bytes
        let flags = s.u8()
        if flags & 1 == 1, !out.isEmpty { out.removeLast(min(out.count, s.u16() % (out.count + 1))) }
        if flags & 2 == 2 { out += s.take(s.below(64)) }
        while s.remaining >= 3, !out.isEmpty {
            let at = s.u16() % out.count
            out[at] ^= s.u8()
        }
        return out
    }

    /// Recomputes a segment's header checksum and every record checksum (so that damage reaches
    /// the record decoder and the inflater instead of stopping at a checksum).
    static func fixSegmentChecksums(_ seg: inout [UInt8]) {
        guard seg.count >= 64 else { return }
        putLE(&seg, 60, 4, UInt64(maskedCRC(seg[0..<60])))
        let salt = Array(seg[32..<40]), number = Array(seg[16..<24])
        var off = 64
        while off + 32 <= seg.count {
            let stored = Int(le(seg, off + 4, 4))
            let end = off + 32 + stored
            guard end <= seg.count else { break }
            let crc = CRC32C.extend(CRC32C.extend(CRC32C.extend(0, salt), number), seg[(off + 4)..<end])
            putLE(&seg, off, 4, UInt64(CRC32C.mask(crc)))
            off = (end + 7) & ~7
        }
    }

    /// Writes a checkpoint body under the template's checkpoint header, and the MANIFEST fields
    /// that must agree with it.
    static func installCheckpointBody(_ body: [UInt8], into files: inout [String: [UInt8]]) {
        let name = templateCheckpoint
        var header = Array(files[name]![0..<64])
        putLE(&header, 32, 8, UInt64(body.count))
        putLE(&header, 40, 4, UInt64(maskedCRC(body[...])))
        putLE(&header, 60, 4, UInt64(maskedCRC(header[0..<60])))
        files[name] = header + body
        var manifest = files["MANIFEST"]!
        putLE(&manifest, 40, 8, UInt64(body.count))
        putLE(&manifest, 48, 4, UInt64(maskedCRC(body[...])))
        putLE(&manifest, manifest.count - 4, 4, UInt64(maskedCRC(manifest[0..<(manifest.count - 4)])))
        files["MANIFEST"] = manifest
    }

    /// A checkpoint body: `chunks` then the directory (stored raw) and a valid trailer.
    static func checkpointBody(chunks: [UInt8], directory dir: [UInt8]) -> [UInt8] {
        var body = chunks + dir
        var trailer = [UInt8](repeating: 0, count: 40)
        for (i, b) in "HEARTHCP".utf8.enumerated() { trailer[i] = b }
        putLE(&trailer, 8, 4, 1)
        putLE(&trailer, 12, 8, UInt64(chunks.count))
        putLE(&trailer, 20, 4, UInt64(dir.count))
        putLE(&trailer, 24, 4, UInt64(dir.count))
        putLE(&trailer, 32, 4, UInt64(maskedCRC(dir[...])))
        putLE(&trailer, 36, 4, UInt64(maskedCRC(trailer[0..<36])))
        body += trailer
        return body
    }

    /// The template's checkpoint body split into (chunks, raw directory) when its directory is stored raw.
    static func templateBodyParts() -> (chunks: [UInt8], directory: [UInt8]?) {
        let body = Array(template[templateCheckpoint]![64...])
        let t = body.count - 40
        let dirOffset = Int(le(body, t + 12, 8)), dirStored = Int(le(body, t + 20, 4))
        let compressed = body[t + 28] == 1
        return (Array(body[0..<dirOffset]), compressed ? nil : Array(body[dirOffset..<(dirOffset + dirStored)]))
    }

    static let templateParts = templateBodyParts()

    /// Arbitrary bytes as one of the store's files (chosen by the first byte); the rest of the
    /// store is the template. The readers must return records or a typed error.
    public static func decode(_ input: [UInt8]) {
        var s = Source(input)
        let mode = DecodeMode(rawValue: s.below(DecodeMode.allCases.count))!
        var files = template
        var appendPayload: [UInt8]?
        switch mode {
        case .segmentRaw: files[templateSegment] = s.rest()
        case .segmentPatched:
            var seg = patch(files[templateSegment]!, &s)
            fixSegmentChecksums(&seg)
            files[templateSegment] = seg
        case .manifestRaw: files["MANIFEST"] = s.rest()
        case .manifestPatched:
            var m = patch(files["MANIFEST"]!, &s)
            if m.count >= 4 { putLE(&m, m.count - 4, 4, UInt64(maskedCRC(m[0..<(m.count - 4)]))) }
            files["MANIFEST"] = m
        case .checkpointBody: installCheckpointBody(s.rest(), into: &files)
        case .checkpointDirectory:
            installCheckpointBody(checkpointBody(chunks: templateParts.chunks, directory: s.rest()), into: &files)
        case .checkpointChunk:
            // One kind-0 chunk at the root holding the input as a node encoding.
            let chunk = s.rest()
            var dir: [UInt8] = [1, 0, 0, 0, 0, 1, 0, 0, 0, 1]  // version, 4 ids, a 1-byte batch of 0 events, 0 untracked, 0 priorities, 1 chunk
            dir += [0, 0, 0]  // root path, kind 0, offset 0
            varint(UInt64(chunk.count), into: &dir)
            varint(UInt64(chunk.count), into: &dir)
            dir.append(0)
            var crc = [UInt8](repeating: 0, count: 4)
            putLE(&crc, 0, 4, UInt64(maskedCRC(chunk[...])))
            dir += crc
            installCheckpointBody(checkpointBody(chunks: chunk, directory: dir), into: &files)
        case .eventBatch: appendPayload = s.rest()
        case .node: appendPayload = [1, 1, 0] + s.rest() + [0]  // one serverOverwrite at the root, time 0
        }
        let fs = SimulatedFileSystem(seed: 1)
        do { try fs.createDirectory(directory) } catch { fatalError("\(error)") }
        for (name, bytes) in files.sorted(by: { $0.key < $1.key }) { encodeFile(bytes, fs, directory + "/" + name) }
        if let payload = appendPayload {
            do {
                let log = try Log.open(directory: directory, fileSystem: fs, options: logOptions())
                _ = try log.append(payload, type: EventCodec.recordType)
                try log.close()
            } catch {
                fatalError("FUZZ FINDING: cannot append to the template store: \(error)")
            }
        }
        checkStoreFiles(fs)
    }

    /// The checks on a store directory holding arbitrary bytes.
    static func checkStoreFiles(_ fs: SimulatedFileSystem) {
        // The verifier and recovery run the same scan: they must agree on whether the store opens.
        var verifyOK = false
        if let report = try? Log.verify(directory: directory, fileSystem: fs) {
            verifyOK = report.damage.map(\.isTornTail) ?? true
        }
        var logOK = false
        do {
            let log = try Log.open(directory: directory, fileSystem: fs, options: logOptions())
            logOK = true
            let checkpointLSN = log.checkpoint?.lsn ?? 0
            var expected = checkpointLSN + 1
            do {
                // Every type (knownTypes: nil): the engine's replay skips skippable records of
                // unknown types, so only the unfiltered stream must have contiguous LSNs.
                try log.replay(after: checkpointLSN, knownTypes: nil) { record in
                    check(record.lsn == expected, "replay LSN \(record.lsn), expected \(expected)")
                    expected += 1
                    guard record.type == EventCodec.recordType else { return }
                    if let events = try? EventCodec.decode(record.payload) { checkRoundTrip(events) }
                }
            } catch {}
            if let c = log.checkpoint { _ = try? Store.verifyCheckpoint(c) }
            try log.close()
        } catch {}
        check(verifyOK == logOK, "Log.verify says \(verifyOK ? "" : "not ")openable, Log.open \(logOK ? "succeeded" : "failed")")

        // The engine: open eagerly (decoding the whole checkpoint), and lazily (partial reads).
        for lazy in [false, true] {
            do {
                let store = try Store.open(directory: directory, options: storeOptions(fs, Clock(), lazy: lazy))
                if lazy {
                    for p in ["x", "x/a", "p/q", "long", "zz/y"] as [Path] { _ = try? store.serverValue(at: p) }
                }
                if let state = try? store.state() {
                    check(state.checkInvariants() == nil, "recovered state breaks an invariant: \(state.checkInvariants() ?? "")")
                }
                try? store.close()
            } catch {}
        }
        // After a successful open the store verifies clean (a torn tail was cut).
        if logOK, let report = try? Log.verify(directory: directory, fileSystem: fs) {
            check(report.damage == nil, "store opened but verifies damaged afterwards: \(report.damage!.error)")
        }

        // Salvage keeps the longest valid prefix; it opens anything but a newer version.
        do {
            let log = try Log.open(directory: directory, fileSystem: fs, options: logOptions(salvage: true))
            try log.close()
            let report: ScanReport
            do { report = try Log.verify(directory: directory, fileSystem: fs) } catch {
                fatalError("FUZZ FINDING: verify fails after salvage: \(error)")
            }
            check(report.damage == nil, "salvaged store verifies damaged: \(report.damage!.error)")
        } catch {
            if case .unsupportedVersion = error { return }
            if case .manifestMissing = error { return }
            fatalError("FUZZ FINDING: salvage failed: \(error)")
        }
    }

    static func decodeSeeds() -> [(String, [UInt8])] {
        var seeds: [(String, [UInt8])] = []
        func add(_ mode: DecodeMode, _ bytes: [UInt8]) {
            seeds.append(("\(mode)-\(seeds.count)", [UInt8(mode.rawValue)] + bytes))
        }
        add(.segmentRaw, template[templateSegment]!)
        add(.segmentPatched, [0])
        add(.segmentPatched, [1, 40, 0])
        add(.manifestRaw, template["MANIFEST"]!)
        add(.manifestPatched, [0])
        add(.checkpointBody, Array(template[templateCheckpoint]![64...]))
        if let dir = templateParts.directory { add(.checkpointDirectory, dir) }
        var s = Source((0..<256).map { (i: Int) -> UInt8 in UInt8(truncatingIfNeeded: i &* 97 &+ 5) })
        for i in 0..<4 {
            let events = [StoreEvent.serverOverwrite(path: path(&s), node: node(&s), at: Int64(i))]
            let bytes = EventCodec.encode(events)
            add(.checkpointChunk, Array(bytes[(3 + events[0].pathLength)..<(bytes.count - 1)]))
            add(.node, Array(bytes[(3 + events[0].pathLength)..<(bytes.count - 1)]))
        }
        var ids = IDs()
        for seed in 0..<6 {
            var rng = SeededRandom(seed: UInt64(seed))
            var src = Source((0..<200).map { (_: Int) -> UInt8 in UInt8(truncatingIfNeeded: rng.next()) })
            add(.eventBatch, EventCodec.encode(eventBatch(&src, ids: &ids)))
        }
        return seeds
    }
}

extension StoreEvent {
    /// Bytes of the path encoding of a serverOverwrite (for cutting a node out of an event batch).
    fileprivate var pathLength: Int {
        guard case let .serverOverwrite(path, _, _) = self else { return 0 }
        var out: [UInt8] = []
        FuzzChecks.varint(UInt64(path.keys.count), into: &out)
        for k in path.keys {
            FuzzChecks.varint(UInt64(k.string.utf8.count), into: &out)
            out += Array(k.string.utf8)
        }
        return out.count - 1  // the caller's offset 3 already counts the root path's one byte
    }
}
