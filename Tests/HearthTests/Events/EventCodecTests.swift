import Testing
@_spi(HearthInternals) @testable import Hearth
import HearthTesting

@Suite struct EventCodecTests {
    @Test func emptyBatchRoundTrips() throws {
        #expect(EventCodec.encode([]) == [0x00])
        #expect(try EventCodec.decode([0x00]) == [])
        #expect(throws: DecodeError.self) { try EventCodec.decode([]) }
    }

    @Test func everyEventKindRoundTrips() throws {
        // Each case, many times with random contents, on its own.
        for kind in 0..<Gen.eventKinds {
            for round: UInt64 in 0..<40 {
                let seed = UInt64(kind) << 32 | round
                var rng = SeededRandom(seed: seed)
                let event = Gen.event(&rng, kind: kind)
                let bytes = EventCodec.encode([event])
                let decoded = try EventCodec.decode(bytes)
                #expect(decoded == [event], "seed \(seed): \(event)")
            }
        }
    }

    @Test func randomBatchesRoundTrip() throws {
        for seed: UInt64 in 1...300 {
            var rng = SeededRandom(seed: seed)
            let batch = (0..<rng.int(0...12)).map { _ in Gen.event(&rng) }
            let bytes = EventCodec.encode(batch)
            let decoded = try EventCodec.decode(bytes)
            #expect(decoded == batch, "seed \(seed)")
            #expect(EventCodec.encode(decoded) == bytes, "seed \(seed)")
        }
    }

    @Test func batchesOfOneByteEventsRoundTrip() throws {
        // `authCleared` is a lone tag byte: the smallest event there is.
        for n in [1, 2, 3, 10, 200] {
            let batch = Array(repeating: StoreEvent.authCleared, count: n)
            #expect(try EventCodec.decode(EventCodec.encode(batch)) == batch, "\(n) × authCleared")
        }
        let mixed: [StoreEvent] = [.authCleared, .writeAcked(id: 1), .authCleared, .authCleared]
        #expect(try EventCodec.decode(EventCodec.encode(mixed)) == mixed)
    }

    @Test func trackedQueryRoundTripKeepsQueryIdentity() throws {
        // Queries travel as JSON; their identity (the wire identifier) and their keys set
        // must survive, including canonically-equivalent keys.
        let q = try QuerySpec(orderBy: .child("score")).startAfter(.number(3)).endBefore(.string("z"), key: "e\u{301}")
            .limitToLast(4)
        let tq = TrackedQuery(
            id: 9, location: QueryLocation(path: "a/\u{E9}", query: q), complete: true, active: false,
            lastUse: -5, keys: ["\u{E9}", "e\u{301}", "07", "7"])
        let decoded = try EventCodec.decode(EventCodec.encode([.trackedQuerySaved(tq)]))
        guard case .trackedQuerySaved(let back)? = decoded.first else { Issue.record("wrong event"); return }
        #expect(back == tq)
        #expect(back.query.identifier == q.identifier)
        #expect(back.keys?.count == 4)
        #expect(back.path != Path(keys: ["a", "e\u{301}"]))
    }

    @Test func everyTruncationIsRejected() {
        for seed: UInt64 in 1...40 {
            var rng = SeededRandom(seed: seed)
            let batch = (0..<rng.int(1...4)).map { _ in Gen.event(&rng) }
            let bytes = EventCodec.encode(batch)
            for n in 0..<bytes.count {
                if let events = try? EventCodec.decode(Array(bytes[..<n])) {
                    Issue.record("seed \(seed): prefix \(n) of \(bytes.count) decoded as \(events)")
                }
            }
        }
    }

    @Test func bitFlipsYieldErrorOrValidBatch() {
        var accepted = 0, rejected = 0
        for seed: UInt64 in 1...150 {
            var rng = SeededRandom(seed: seed)
            let batch = (0..<rng.int(1...4)).map { _ in Gen.event(&rng) }
            let bytes = EventCodec.encode(batch)
            for _ in 0..<20 {
                var flipped = bytes
                flipped[rng.int(0..<flipped.count)] ^= UInt8(1) << UInt8(rng.int(0..<8))
                if rng.chance(0.3) { flipped[rng.int(0..<flipped.count)] = UInt8(truncatingIfNeeded: rng.next()) }
                do {
                    let decoded = try EventCodec.decode(flipped)
                    accepted += 1
                    // A different-but-valid batch: it re-encodes and decodes to itself, and
                    // the reducer takes it without trapping.
                    #expect((try? EventCodec.decode(EventCodec.encode(decoded))) == decoded, "seed \(seed)")
                    var state = StoreState()
                    state.apply(decoded)
                    #expect(state.checkInvariants() == nil, "seed \(seed)")
                } catch {
                    rejected += 1
                    #expect(error.offset >= 0 && error.offset <= flipped.count, "seed \(seed): \(error)")
                }
            }
        }
        #expect(accepted > 0 && rejected > 0)
    }

    static let hostile: [(String, [UInt8])] = [
        ("huge event count", [0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x7F, 0x0A]),
        ("count beyond input", [0x05, 0x0A, 0x0A]),
        ("unknown event tag 0", [0x01, 0x00]),
        ("unknown event tag 19", [0x01, 19]),
        ("trailing bytes", [0x01, 0x0A, 0x0A]),
        ("id beyond Int64.max", [0x01, 0x04, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01]),
        (
            "path deeper than maxDepth",
            [0x01, 0x01, 65] + Array(repeating: [1, 0x61], count: 65).flatMap { $0 } + [0x00, 0x00]
        ),
        ("huge path key count", [0x01, 0x01, 0xFF, 0xFF, 0xFF, 0xFF, 0x0F]),
        ("empty key in path", [0x01, 0x01, 0x01, 0x00, 0x00, 0x00]),
        ("unknown write operation", [0x01, 0x03, 0x01, 0x00, 0x07]),
        ("huge update child count", [0x01, 0x03, 0x01, 0x00, 0x01, 0xFF, 0xFF, 0xFF, 0xFF, 0x0F]),
        ("invalid query JSON", [0x01, 0x08, 0x00, 0x01, 0x7B, 0x00]),
        ("unknown query field", [0x01, 0x08, 0x00, 0x07] + Array(#"{"x":1}"#.utf8) + [0x01]),
        ("invalid bool byte", [0x01, 0x08, 0x00, 0x02] + Array("{}".utf8) + [0x02]),
        ("unknown keys flag", [0x01, 0x06, 0x01, 0x00, 0x02] + Array("{}".utf8) + [0x01, 0x00, 0x00, 0x05]),
        ("unknown transaction status", [0x01, 0x0B, 0x01, 0x00, 0x00, 0x02, 0x02, 0x00, 0x07]),
        ("retry count beyond Int32", [0x01, 0x0B, 0x01, 0x00, 0x00, 0x02, 0x02, 0x80, 0x80, 0x80, 0x80, 0x08, 0x00]),
        ("unknown onDisconnect action", [0x01, 0x0D, 0x01, 0x00, 0x04, 0x00]),
        ("NaN server time offset", [0x01, 0x10, 0, 0, 0, 0, 0, 0, 0xF8, 0x7F]),
        ("infinite server time offset", [0x01, 0x10, 0, 0, 0, 0, 0, 0, 0xF0, 0x7F]),
        ("huge pruned path count", [0x01, 0x12, 0xFF, 0xFF, 0xFF, 0xFF, 0x0F]),
        ("invalid UTF-8 in auth token", [0x01, 0x09, 0x01, 0xFF, 0x00]),
        ("bad node inside serverOverwrite", [0x01, 0x01, 0x00, 0x07, 0x00, 0x00]),
    ]

    @Test(arguments: hostile.indices)
    func hostileInputIsRejected(_ i: Int) {
        let (name, bytes) = Self.hostile[i]
        #expect(throws: DecodeError.self, "\(name)") { try EventCodec.decode(bytes) }
    }
}
