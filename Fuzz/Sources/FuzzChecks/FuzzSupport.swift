// What every fuzz check shares: the input reader (`Source`), store and log options on a simulated
// file system, generators of keys, paths, nodes and queries, little-endian and checksum helpers for
// patching files, and the event-sourcing helpers (fold, state diff, codec round trip).
// Fuzz/Sources/FuzzChecks is the one source of these checks: Tests/HearthTests/FuzzChecks/ holds a
// symbolic link to each of its files (Fuzz/sync-checks.sh makes them; FuzzRegressionTests fails when a
// copy differs or is missing), so the fuzzers and `swift test` run one and the same code.
@_spi(HearthInternals) import Hearth
@_spi(HearthInternals) import HearthLog
import HearthModel
import HearthTesting
import Synchronization

extension FuzzChecks {
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
}
