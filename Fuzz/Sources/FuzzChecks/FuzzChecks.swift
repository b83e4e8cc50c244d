// The checks behind Hearth's fuzz targets (Fuzz/README.md). Pure functions of the input bytes:
// every byte string is a valid input, and a violated invariant stops the process (fatalError), which
// libFuzzer reports as a finding. Tests/HearthTests/FuzzRegressionTests.swift holds a verbatim copy
// of this file (between its BEGIN/END markers) and replays Fuzz/Corpus/** and Fuzz/Regressions/**
// through it in plain `swift test`; run Fuzz/sync-checks.sh after editing this file.
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
@_spi(HearthInternals) import Hearth
@_spi(HearthInternals) import HearthLog
import HearthModel
import HearthTesting
import Synchronization

public enum FuzzChecks {
    // MARK: - Shared helpers

    /// HEARTH_FUZZ_TRACE=1 prints what the recovery program does (to reproduce a finding).
    static let tracing = getenv("HEARTH_FUZZ_TRACE") != nil
    static func trace(_ message: @autoclosure () -> String) { if tracing {
            let line = Array("trace: \(message())\n".utf8)
            _ = line.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
        } }

    /// Reports a violated invariant (a finding).
    static func check(_ condition: @autoclosure () -> Bool, _ message: @autoclosure () -> String) {
        if !condition() { fatalError("FUZZ FINDING: \(message())") }
    }

    /// Reads choices from the input; past its end every read is 0, so every input is valid.
    struct Source {
        let bytes: [UInt8]
        var index = 0
        init(_ bytes: [UInt8]) { self.bytes = bytes }
        var isAtEnd: Bool { index >= bytes.count }
        var remaining: Int { max(0, bytes.count - index) }
        mutating func u8() -> UInt8 {
            guard index < bytes.count else { return 0 }
            defer { index += 1 }
            return bytes[index]
        }
        /// A choice in 0..<n (n ≤ 256).
        mutating func below(_ n: Int) -> Int { n <= 1 ? 0 : Int(u8()) % n }
        mutating func bool() -> Bool { u8() & 1 == 1 }
        mutating func u16() -> Int { Int(u8()) | Int(u8()) << 8 }
        mutating func pick<T>(_ xs: [T]) -> T { xs[below(xs.count)] }
        mutating func take(_ n: Int) -> [UInt8] {
            let k = min(n, remaining)
            defer { index += k }
            return Array(bytes[index..<(index + k)])
        }
        mutating func rest() -> [UInt8] { take(remaining) }
    }

    /// A settable clock for stores (milliseconds).
    final class Clock: Sendable {
        let now = Atomic<Int64>(1_700_000_000_000)
        func advance(_ ms: Int64) { now.add(ms, ordering: .relaxed) }
        var value: Int64 { now.load(ordering: .relaxed) }
    }

    static let directory = "/db"

    static func storeOptions(_ fs: SimulatedFileSystem, _ clock: Clock, durability: Durability = .full,
                             lazy: Bool = false) -> Store.Options {
        var o = Store.Options()
        o.fileSystem = fs
        o.clock = { clock.value }
        o.backgroundMaintenance = false
        o.lazyCacheLoad = lazy
        o.durability = durability
        o.segmentSize = 4096
        o.checkpointMinimumBytes = 4096
        return o
    }

    static func logOptions(salvage: Bool = false) -> Log.Options {
        var o = Log.Options()
        o.createIfMissing = false
        o.salvage = salvage
        o.segmentSize = 4096
        return o
    }

    static let keys: [ChildKey] = ["a", "b", "c", "1", "07", "-3", "2147483648", "ü", "x y", "k0", "k1", "😀"]

    static func key(_ s: inout Source) -> ChildKey { s.pick(keys) }

    static func path(_ s: inout Source, maxDepth: Int = 3) -> Path {
        Path(keys: (0..<s.below(maxDepth + 1)).map { _ in key(&s) })
    }

    static func nonRootPath(_ s: inout Source) -> Path {
        Path(keys: (0...s.below(3)).map { _ in key(&s) })
    }

    static let numbers: [Double] = [0, 1, -1, 0.5, 42, -0.0, 1e300, -2147483648, 9_007_199_254_740_992, 3.25]

    static func node(_ s: inout Source, depth: Int = 0) -> Node {
        let n: Node
        switch s.below(depth >= 3 ? 6 : 8) {
        case 0: n = .empty
        case 1: n = .bool(s.bool())
        case 2: n = s.bool() ? .number(s.pick(numbers)) : Node(.integer(exactly: s.pick([.max, .min, (1 << 53) + 1, 42])))
        case 3: n = .string(String(repeating: s.pick(["s", "é", "😀", "ab"]), count: s.below(24)))
        case 4: n = Node(.serverValue(.timestamp))
        case 5: n = Node(.serverValue(.increment(s.pick(numbers))))
        default:
            let count = 1 + s.below(4)
            n = Node(children: (0..<count).map { _ in (key: key(&s), value: node(&s, depth: depth + 1)) })
        }
        if !n.isEmpty, s.below(6) == 0 {
            let priority: Priority = s.bool() ? .number(s.pick(numbers)) : .string(s.pick(["p", "", "z"]))
            if let v = n.leafValue { return Node(v, priority: priority) }
            return Node(children: n.children, priority: priority)
        }
        return n
    }

    static func children(_ s: inout Source) -> [ChildUpdate] {
        (0..<s.below(4)).map { _ in ChildUpdate(path: nonRootPath(&s), node: node(&s)) }
    }

    static func query(_ s: inout Source) -> QuerySpec {
        switch s.below(6) {
        case 0, 1: return .default
        case 2: return (try? QuerySpec(orderBy: .value).limitToLast(1 + s.below(5))) ?? .default
        case 3: return (try? QuerySpec(orderBy: .key).startAt(.string("b")).limitToFirst(2)) ?? .default
        case 4: return (try? QuerySpec(orderBy: .child("a")).endAt(.number(3), key: "k1")) ?? .default
        default: return QuerySpec(orderBy: .value)
        }
    }

    static func location(_ s: inout Source) -> QueryLocation { QueryLocation(path: path(&s), query: query(&s)) }

    static func encodeFile(_ bytes: [UInt8], _ fs: SimulatedFileSystem, _ path: String) {
        do {
            let f = try fs.open(path, mode: .createTruncate)
            try f.write(bytes, at: 0)
            try f.sync()
            try f.close()
        } catch {
            fatalError("simulated file system refused a write: \(error)")
        }
    }

    static func le(_ bytes: [UInt8], _ at: Int, _ n: Int) -> UInt64 {
        var v: UInt64 = 0
        for i in 0..<n where at + i < bytes.count { v |= UInt64(bytes[at + i]) << (8 * UInt64(i)) }
        return v
    }

    static func putLE(_ bytes: inout [UInt8], _ at: Int, _ n: Int, _ v: UInt64) {
        for i in 0..<n where at + i < bytes.count { bytes[at + i] = UInt8(truncatingIfNeeded: v >> (8 * UInt64(i))) }
    }

    static func maskedCRC(_ bytes: ArraySlice<UInt8>) -> UInt32 { CRC32C.mask(CRC32C.extend(0, bytes)) }

    static func varint(_ v: UInt64, into out: inout [UInt8]) {
        var v = v
        while v >= 0x80 { out.append(UInt8(v & 0x7F) | 0x80); v >>= 7 }
        out.append(UInt8(v))
    }

    static func fold(_ batches: some Sequence<[StoreEvent]>) -> StoreState {
        var s = StoreState()
        for b in batches { s.apply(b) }
        return s
    }

    /// Which parts of two states differ (for finding messages).
    static func diff(_ a: StoreState, _ b: StoreState) -> String {
        var parts: [String] = []
        if a.serverCache != b.serverCache { parts.append("serverCache \(a.serverCache) vs \(b.serverCache)") }
        if a.pendingWrites != b.pendingWrites { parts.append("pendingWrites \(a.pendingWrites) vs \(b.pendingWrites)") }
        if a.trackedQueries != b.trackedQueries { parts.append("trackedQueries \(a.trackedQueries) vs \(b.trackedQueries)") }
        if a.trackedByLocation != b.trackedByLocation { parts.append("trackedByLocation") }
        if a.pins != b.pins { parts.append("pins \(a.pins) vs \(b.pins)") }
        if a.auth != b.auth { parts.append("auth") }
        if a.transactions != b.transactions { parts.append("transactions \(a.transactions) vs \(b.transactions)") }
        if a.onDisconnect != b.onDisconnect { parts.append("onDisconnect \(a.onDisconnect) vs \(b.onDisconnect)") }
        if a.untrackedEntries.map(\.path) != b.untrackedEntries.map(\.path) || a.untrackedEntries.map(\.lastWrite) != b.untrackedEntries.map(\.lastWrite) {
            parts.append("untracked \(a.untrackedEntries) vs \(b.untrackedEntries)")
        }
        if a.lastWriteID != b.lastWriteID || a.lastQueryID != b.lastQueryID || a.lastTransactionID != b.lastTransactionID
            || a.lastOnDisconnectID != b.lastOnDisconnectID {
            parts.append("ids \([a.lastWriteID, a.lastQueryID, a.lastTransactionID, a.lastOnDisconnectID]) vs \([b.lastWriteID, b.lastQueryID, b.lastTransactionID, b.lastOnDisconnectID])")
        }
        if a.serverTimeOffsetMs != b.serverTimeOffsetMs { parts.append("offset") }
        return parts.isEmpty ? "(equal fields; Equatable differs elsewhere)" : parts.joined(separator: "; ")
    }

    /// The round trip of the event codec: whatever decodes re-encodes to something that decodes to
    /// the same events.
    static func checkRoundTrip(_ events: [StoreEvent]) {
        let bytes = EventCodec.encode(events)
        let back: [StoreEvent]
        do { back = try EventCodec.decode(bytes) } catch {
            fatalError("FUZZ FINDING: encoded events do not decode: \(error); events \(events)")
        }
        check(back == events, "event codec round trip differs: \(events) → \(back)")
    }

    // MARK: - Entry

    /// Called by the fuzzers' LLVMFuzzerInitialize: with HEARTH_FUZZ_WRITE_SEEDS=dir, writes the seed
    /// corpus of `target` into dir and exits.
    public static func initialize(target: String) {
        guard let dir = getenv("HEARTH_FUZZ_WRITE_SEEDS").map({ String(cString: $0) }) else { return }
        let seeds: [(String, [UInt8])]
        switch target {
        case "FuzzDecode": seeds = decodeSeeds()
        case "FuzzRecovery": seeds = recoverySeeds()
        default: seeds = stateSeeds()
        }
        let fs = POSIXFileSystem()
        do {
            try fs.createDirectory(dir)
            for (name, bytes) in seeds {
                let f = try fs.open(dir + "/" + name, mode: .createTruncate)
                try f.write(bytes, at: 0)
                try f.close()
            }
        } catch {
            fatalError("cannot write seeds to \(dir): \(error)")
        }
        print("wrote \(seeds.count) seeds for \(target) to \(dir)")
        exit(0)
    }

    /// Runs the check of `target` ("FuzzDecode", "FuzzRecovery", "FuzzState") on one input.
    public static func run(target: String, _ bytes: [UInt8]) {
        switch target {
        case "FuzzDecode": decode(bytes)
        case "FuzzRecovery": recovery(bytes)
        case "FuzzState": state(bytes)
        default: fatalError("unknown fuzz target \(target)")
        }
    }

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
            var rng = SplitMix64(seed: UInt64(seed))
            var src = Source((0..<200).map { (_: Int) -> UInt8 in UInt8(truncatingIfNeeded: rng.next()) })
            add(.eventBatch, EventCodec.encode(eventBatch(&src, ids: &ids)))
        }
        return seeds
    }

    // MARK: - 2. Recovery

    /// One step of the model's history: an event batch and the LSN it has (or would have).
    struct Entry {
        var events: [StoreEvent]
        var lsn: LSN
    }

    /// The input is a program: operations with arguments, tiers, crash points, faults, power cuts.
    /// After every crash the store must reopen, and its state must be the fold of the history
    /// through the recovered LSN, which must cover everything acknowledged as durable.
    public static func recovery(_ input: [UInt8]) {
        var s = Source(input)
        let fs = SimulatedFileSystem(seed: UInt64(s.u8()))
        let clock = Clock()
        let tiers: [Durability] = [.full, .batched(interval: .milliseconds(1)), .buffered]
        let options = storeOptions(fs, clock, durability: s.pick(tiers))
        var history: [Entry] = []
        var durable: LSN = 0  // everything through this LSN was acknowledged as durable
        var store: Store?
        do { store = try Store.open(directory: directory, options: options) } catch {
            fatalError("FUZZ FINDING: cannot create a store: \(error)")
        }
        var steps = 0
        while !s.isAtEnd, steps < 64 {
            steps += 1
            clock.advance(1)
            guard let live = store else { break }
            var failed = false
            var inFlight: Entry?
            let lastBefore = live.lastLSN
            let op = s.below(16)
            defer { trace("step \(steps) op \(op) lastLSN \(lastBefore)→\(live.lastLSN) durable \(durable) failed \(failed) crashed \(fs.hasCrashed) history \(history.count)") }
            switch op {
            case 0...6:
                let tier: Durability? = s.below(4) == 3 ? nil : tiers[s.below(3)]
                let state: StoreState
                do { state = try live.state() } catch { fatalError("FUZZ FINDING: state() of a live store failed: \(error)") }
                var built: [StoreEvent] = []
                do {
                    let r = try live.commit(durability: tier) { (b: inout StoreBatch) throws(StoreError) in
                        build(&b, &s, state)
                        // What the commit logs: the batch plus the tracked-key changes it
                        // records after the build.
                        var logged = b
                        logged.recordTrackedKeyChanges()
                        built = logged.events
                    }
                    trace("commit tier \(String(describing: tier)) lsn \(r.lsn) events \(r.events.count)")
                    if !r.events.isEmpty {
                        check(r.lsn == lastBefore + 1, "commit got LSN \(r.lsn) after \(lastBefore)")
                        check(r.lsn > durable, "LSN \(r.lsn) reused (durable through \(durable))")
                        history.append(Entry(events: r.events, lsn: r.lsn))
                        if (tier ?? options.durability) == .full { durable = r.lsn }
                    }
                } catch {
                    trace("commit failed: \(error)")
                    failed = true
                    if !built.isEmpty { inFlight = Entry(events: built, lsn: lastBefore + 1) }
                }
            case 7:
                do {
                    try live.compact()
                    durable = live.lastLSN
                } catch { failed = true }
            case 8:
                do {
                    try live.waitUntilDurable(live.lastLSN)
                    durable = live.lastLSN
                } catch { failed = true }
            case 9:
                let n = 1 + s.below(40)
                trace("crash after \(n) calls")
                fs.crash(afterCalls: n)
            case 10:
                injectFault(fs, &s)
            case 11:
                failed = true  // the process dies now
            case 12:
                do {
                    try live.close()
                    durable = live.lastLSN
                } catch { }
                failed = true
            default:
                clock.advance(Int64(s.below(100)))
            }
            if let e = inFlight { history.append(e) }
            // A crash inside work whose errors are not reported (inline maintenance after a commit)
            // kills the process all the same.
            if failed || fs.hasCrashed {
                store = nil
                reopen(fs, &s, clock, options, &history, &durable, &store)
            }
        }
        if let live = store {
            // Disarm what the program left armed; the store has not failed yet, so it must close.
            fs.crash(afterCalls: nil)
            fs.clearFaults()
            let state: StoreState
            do { state = try live.state() } catch { fatalError("FUZZ FINDING: state() failed at the end: \(error)") }
            let model = fold(history.map(\.events))
            check(state == model, "live state differs from the model: \(diff(model, state))")
            // A clean close makes everything durable; a power cut after it loses nothing. (It
            // fails if inline maintenance poisoned the log; then nothing more is durable.)
            do {
                try live.close()
                durable = history.last?.lsn ?? durable
            } catch {
                trace("final close failed: \(error)")
            }
            store = nil
            var s2 = Source([])
            reopen(fs, &s2, clock, options, &history, &durable, &store)
            try? store?.close()
        }
    }

    static func injectFault(_ fs: SimulatedFileSystem, _ s: inout Source) {
        let op: FileOperation = s.pick([.write, .sync, .create, .rename, .syncDirectory, .truncate, .open, .unlink, .read])
        let code: FileSystemError.Code = s.bool() ? .ioError : .noSpace
        let sticky = s.below(4) == 0, skip = s.below(4)
        trace("fault \(op) \(code) sticky \(sticky) skip \(skip)")
        fs.injectFault(op, code, sticky: sticky, skip: skip)
    }

    /// Kills the process (no more I/O from it), cuts the power, reopens (possibly crashing or
    /// failing on a fault during the open, then retrying), and checks the recovered state.
    static func reopen(_ fs: SimulatedFileSystem, _ s: inout Source, _ clock: Clock, _ options: Store.Options,
                       _ history: inout [Entry], _ durable: inout LSN, _ store: inout Store?) {
        fs.crash(afterCalls: 0)
        store = nil
        let modes = SimulatedFileSystem.PowerCutMode.all
        var failedOpens = 0
        var reopened: Store?
        for attempt in 0..<4 {
            let mode = modes[s.below(modes.count)]
            trace("power cut \(mode)")
            fs.powerCut(mode: mode)
            if attempt < 3 {
                switch s.below(6) {
                case 0: fs.crash(afterCalls: 1 + s.below(30))
                case 1: injectFault(fs, &s)
                default: break
                }
            }
            do {
                reopened = try Store.open(directory: directory, options: options)
                break
            } catch {
                trace("open failed: \(error)")
                check(attempt < 3, "reopen without crash point or fault failed: \(error)")
                failedOpens += 1
            }
        }
        guard let live = reopened else { fatalError("unreachable") }
        let recovered = live.recovery.lastLSN
        let state: StoreState
        do { state = try live.state() } catch { fatalError("FUZZ FINDING: state() after reopen failed: \(error)") }
        check(state.checkInvariants() == nil, "recovered state breaks an invariant: \(state.checkInvariants() ?? "")")
        check(recovered >= durable, "acknowledged LSN \(durable) lost: recovered through \(recovered)")
        let lastKnown = history.last?.lsn ?? 0
        check(recovered <= lastKnown + (failedOpens > 0 ? 1 : 0), "phantom records: recovered through \(recovered), history ends at \(lastKnown)")

        // Candidate histories through `recovered`: the history itself, or — when an earlier open
        // attempt may have committed its sessionStarted before failing — that instead of the last entry.
        let session = [StoreEvent.sessionStarted(at: clock.value)]
        let kept = Array(history.prefix { $0.lsn <= recovered })
        var candidates: [[Entry]] = []
        if kept.last?.lsn ?? 0 == recovered, kept.count == history.prefix(while: { $0.lsn <= recovered }).count {
            candidates.append(kept)
        }
        if failedOpens > 0, recovered > durable {
            let base = Array(history.prefix { $0.lsn < recovered })
            if base.last?.lsn ?? 0 == recovered - 1 { candidates.append(base + [Entry(events: session, lsn: recovered)]) }
        }
        var matched: [Entry]?
        for c in candidates {
            var model = fold(c.map(\.events))
            if model.trackedQueries.values.contains(where: \.active) { model.apply(session) }
            if model == state { matched = c; break }
        }
        guard var newHistory = matched else {
            var model = fold(kept.map(\.events))
            if model.trackedQueries.values.contains(where: \.active) { model.apply(session) }
            fatalError("FUZZ FINDING: recovered state (through LSN \(recovered), durable \(durable), history to \(lastKnown), failed opens \(failedOpens)) is not the model's: \(diff(model, state))")
        }
        if live.lastLSN == recovered + 1 {
            newHistory.append(Entry(events: session, lsn: recovered + 1))
        } else {
            check(live.lastLSN == recovered, "store lastLSN \(live.lastLSN) after recovering \(recovered)")
        }
        check(fold(newHistory.map(\.events)) == state, "state after open is not the model's")
        history = newHistory
        durable = recovered
        store = live
    }

    /// Adds 1–2 mutations chosen by the input to a batch (skipping any the batch rejects).
    static func build(_ b: inout StoreBatch, _ s: inout Source, _ state: StoreState) {
        for _ in 0...s.below(2) {
            switch s.below(12) {
            case 0, 1: try? b.applyServerOverwrite(node(&s), at: path(&s))
            case 2: try? b.applyServerMerge(children(&s), at: path(&s))
            case 3: _ = try? b.saveWrite(.set(node(&s)), at: nonRootPath(&s))
            case 4: _ = try? b.saveWrite(.update(children(&s)), at: path(&s))
            case 5:
                if let w = state.pendingWrites.first {
                    try? b.ackWrite(w.id)
                    try? b.applyServerOverwrite(node(&s), at: w.path)
                }
            case 6: if let w = state.pendingWrites.last { try? b.revertWrite(w.id) }
            case 7: _ = try? b.trackQuery(at: location(&s), complete: s.bool(), active: s.bool(), keys: s.bool() ? ["a", "k1"] : nil)
            case 8:
                if let q = state.trackedQueries.values.min(by: { $0.id < $1.id }) { try? b.untrackQuery(at: q.location) }
            case 9: try? b.keepSynced(location(&s), s.bool())
            case 10:
                if s.bool() { b.saveAuth(AuthToken(token: "t\(s.u8())", expiresAt: Int64(s.u8()))) } else { b.clearAuth() }
            default:
                if let tx = try? b.enqueueTransaction(at: path(&s), functionName: "f", argument: node(&s), localResult: node(&s)), s.bool() {
                    _ = try? b.updateTransaction(tx.id, retryCount: 1, status: .sent)
                }
                if let op = try? b.queueOnDisconnect(s.pick([.remove, .cancel, .set(.number(1))]), at: path(&s)), s.bool() {
                    try? b.ackOnDisconnect(op.id)
                }
            }
        }
        if s.below(8) == 0 {
            // A large, compressible value: rolls segments and triggers checkpoints.
            try? b.applyServerOverwrite(.string(String(repeating: "x", count: 200 * (1 + s.below(20)))), at: path(&s))
        }
    }

    static func recoverySeeds() -> [(String, [UInt8])] {
        var rng = SplitMix64(seed: 42)
        return (0..<16).map { i in
            let n = 40 + Int(rng.next() % 400)
            return ("program-\(i)", (0..<n).map { _ in UInt8(truncatingIfNeeded: rng.next()) })
        }
    }

    // MARK: - 3. State

    /// Ids handed out by the event generator: mostly fresh (as the store assigns them), sometimes reused.
    struct IDs {
        var write: Int64 = 0, query: Int64 = 0, transaction: Int64 = 0, onDisconnect: Int64 = 0
        static func next(_ counter: inout Int64, _ s: inout Source) -> Int64 {
            if counter > 0, s.below(4) == 0 { return 1 + Int64(s.below(Int(min(counter, 200)))) }
            counter += 1
            return counter
        }
        static func existing(_ counter: Int64, _ s: inout Source) -> Int64 { 1 + Int64(s.below(Int(min(counter + 1, 200)))) }
    }

    /// Any event, structure-aware: every byte string maps to valid events.
    static func event(_ s: inout Source, ids: inout IDs) -> StoreEvent {
        let t = 1_700_000_000_000 + Int64(s.u8()) - 20
        switch s.below(19) {
        case 0: return .serverOverwrite(path: path(&s), node: node(&s), at: t)
        case 1: return .serverMerge(path: path(&s), children: children(&s), at: t)
        case 2:
            let id = IDs.next(&ids.write, &s)
            return .writeSaved(PendingWrite(id: id, path: path(&s), operation: s.bool() ? .set(node(&s)) : .update(children(&s))))
        case 3: return .writeAcked(id: IDs.existing(ids.write, &s))
        case 4: return .writeReverted(id: IDs.existing(ids.write, &s))
        case 5:
            let id = s.bool() && ids.query > 0 ? IDs.existing(ids.query, &s) : IDs.next(&ids.query, &s)
            let keys: Set<ChildKey>? = s.bool() ? Set((0..<s.below(4)).map { _ in key(&s) }) : nil
            return .trackedQuerySaved(TrackedQuery(id: id, location: location(&s), complete: s.bool(), active: s.bool(), lastUse: t, keys: keys))
        case 6: return .trackedQueryRemoved(id: IDs.existing(ids.query, &s))
        case 7: return .pinChanged(location(&s), on: s.bool())
        case 8: return .authSaved(AuthToken(token: s.pick(["", "tok", "é"]), expiresAt: t))
        case 9: return .authCleared
        case 10:
            let id = s.bool() && ids.transaction > 0 ? IDs.existing(ids.transaction, &s) : IDs.next(&ids.transaction, &s)
            return .transactionSaved(QueuedTransaction(id: id, path: path(&s), functionName: s.pick(["f", "", "inc"]), argument: node(&s),
                                                       localResult: node(&s), retryCount: s.below(5), status: s.pick(QueuedTransaction.Status.allCases)))
        case 11: return .transactionRemoved(id: IDs.existing(ids.transaction, &s))
        case 12:
            let id = IDs.next(&ids.onDisconnect, &s)
            let action: OnDisconnectOperation.Action
            switch s.below(4) {
            case 0: action = .set(node(&s))
            case 1: action = .update(children(&s))
            case 2: action = .remove
            default: action = .cancel
            }
            return .onDisconnectSaved(OnDisconnectOperation(id: id, path: path(&s), action: action, acknowledged: s.bool()))
        case 13: return .onDisconnectAcked(id: IDs.existing(ids.onDisconnect, &s))
        case 14: return .onDisconnectRemoved(id: IDs.existing(ids.onDisconnect, &s))
        case 15: return .serverTimeOffset(ms: s.pick(numbers))
        case 16: return .sessionStarted(at: t)
        case 17:
            return .trackedQueryKeysChanged(id: IDs.existing(ids.query, &s), added: (0..<s.below(3)).map { _ in key(&s) },
                                            removed: (0..<s.below(3)).map { _ in key(&s) })
        default:
            return .cachePruned(PruneResult(prunedPaths: (0..<s.below(3)).map { _ in path(&s) },
                                            keptPaths: (0..<s.below(3)).map { _ in path(&s) },
                                            removedQueryIDs: (0..<s.below(3)).map { _ in IDs.existing(ids.query, &s) }))
        }
    }

    static func eventBatch(_ s: inout Source, ids: inout IDs) -> [StoreEvent] {
        (0...s.below(3)).map { _ in event(&s, ids: &ids) }
    }

    enum StateStep {
        case batch([StoreEvent])
        case checkpoint
        case reopen
    }

    /// Random event sequences, written to the log in batches with checkpoints and reopens at
    /// input-chosen points: checkpoint + replay (eager and lazy) must equal applying them directly,
    /// and every batch survives the event codec's round trip.
    public static func state(_ input: [UInt8]) {
        var s = Source(input)
        var ids = IDs()
        var steps: [StateStep] = []
        while !s.isAtEnd, steps.count < 48 {
            switch s.below(10) {
            case 0: steps.append(.checkpoint)
            case 1: steps.append(.reopen)
            default: steps.append(.batch(eventBatch(&s, ids: &ids)))
            }
        }
        let fs = SimulatedFileSystem(seed: 3)
        let clock = Clock()
        var direct = StoreState()
        var log: Log?
        func openLog() -> Log {
            do { return try Log.open(directory: directory, fileSystem: fs, options: logOptions()) } catch {
                fatalError("FUZZ FINDING: Log.open failed: \(error)")
            }
        }
        /// Opens the store (mirroring its sessionStarted) and compares its state with the direct one.
        func openStore(lazy: Bool) -> Store {
            let store: Store
            do { store = try Store.open(directory: directory, options: storeOptions(fs, clock, lazy: lazy)) } catch {
                fatalError("FUZZ FINDING: Store.open failed: \(error)")
            }
            if direct.trackedQueries.values.contains(where: \.active) { direct.apply(.sessionStarted(at: clock.value)) }
            if lazy {
                for p in ["a", "b/c", "1", "a/07/ü"] as [Path] {
                    let v: Node
                    do { v = try store.serverValue(at: p) } catch { fatalError("FUZZ FINDING: lazy read failed: \(error)") }
                    check(v == direct.serverCache.child(at: p), "lazy read at \(p): \(v) vs \(direct.serverCache.child(at: p))")
                }
            }
            let state: StoreState
            do { state = try store.state() } catch { fatalError("FUZZ FINDING: state() failed: \(error)") }
            check(state == direct, "store state (lazy \(lazy)) differs from direct application: \(diff(direct, state))")
            check(state.checkInvariants() == nil, "state breaks an invariant: \(state.checkInvariants() ?? "")")
            return store
        }
        do {
            try fs.createDirectory(directory)
            try Store.open(directory: directory, options: storeOptions(fs, clock)).close()
        } catch { fatalError("\(error)") }
        for step in steps {
            clock.advance(1)
            switch step {
            case let .batch(events):
                checkRoundTrip(events)
                direct.apply(events)
                if log == nil { log = openLog() }
                do { _ = try log!.append(EventCodec.encode(events), type: EventCodec.recordType, durability: .buffered) } catch {
                    fatalError("FUZZ FINDING: append failed: \(error)")
                }
            case .checkpoint:
                try? log?.close()
                log = nil
                let store = openStore(lazy: false)
                do { try store.compact(); try store.close() } catch { fatalError("FUZZ FINDING: compact failed: \(error)") }
            case .reopen:
                try? log?.close()
                log = nil
                let store = openStore(lazy: clock.value % 2 == 0)
                do { try store.close() } catch { fatalError("FUZZ FINDING: close failed: \(error)") }
            }
        }
        try? log?.close()
        log = nil
        for lazy in [true, false] {
            let store = openStore(lazy: lazy)
            do { try store.close() } catch { fatalError("FUZZ FINDING: close failed: \(error)") }
        }
    }

    static func stateSeeds() -> [(String, [UInt8])] {
        var rng = SplitMix64(seed: 7)
        return (0..<16).map { i in
            let n = 16 + Int(rng.next() % 300)
            return ("events-\(i)", (0..<n).map { _ in UInt8(truncatingIfNeeded: rng.next()) })
        }
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
