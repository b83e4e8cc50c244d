// `hearth salvage STORE`: one flipped bit in the checkpoint, the MANIFEST or mid-segment does
// not leave the tool unable to read anything. Before: `get` fails and
// `verify` names the repair. Salvage: damaged files moved aside as *.broken, the longest valid
// prefix kept, what was lost reported. After: `get` reads that prefix and `verify` is clean.
import Foundation
@_spi(HearthInternals) import Hearth
import HearthLog
import Testing

@Suite(.enabled(if: Tool.binary != nil, Tool.missingMessage))
struct SalvageToolTests {
    /// k1…k10, a checkpoint (through LSN 10, which drops the first segment), then k11…k20 —
    /// each commit synced, so damage before the last record is provably not a torn write.
    static func makeStore(_ store: TempStore) throws {
        var lines = (1...10).map { #"{"op":"serverSet","path":"d/k\#($0)","value":\#($0)}"# }
        lines.append(#"{"op":"compact"}"#)
        lines += (11...20).map { #"{"op":"serverSet","path":"d/k\#($0)","value":\#($0)}"# }
        let r = try Tool.apply(store.path, lines)
        #expect(r.status == 0, "\(r)")
    }

    /// `{"k1":1,…,"kN":N}`, or null.
    static func value(through n: Int) throws -> Node {
        n == 0 ? .empty : try Node(jsonText: "{" + (1...n).map { #""k\#($0)":\#($0)"# }.joined(separator: ",") + "}")
    }

    static func flip(_ store: TempStore, _ name: String, at offset: Int) throws {
        var bytes = try store.read(name)
        bytes[offset] ^= 0x04
        try store.write(name, bytes)
    }

    /// Before salvage: `get` fails, `verify` reports the damage and names the repair.
    static func expectDamaged(_ store: TempStore) throws {
        let get = try Tool.run(["get", store.path, "d", "--json"])
        #expect(get.status == 1 && get.stderr.contains("damaged") && get.stderr.contains("hearth salvage"), "\(get)")
        let verify = try Tool.run(["verify", store.path])
        #expect(verify.status == 1, "\(verify)")
        #expect(verify.stdout.contains("to repair: hearth salvage \(store.path)"), "\(verify)")
        #expect(verify.stderr.contains("run `hearth salvage \(store.path)` to repair"), "\(verify)")
    }

    /// After salvage: `get` reads the prefix through LSN `n` (k1…kn), verify is clean.
    static func expectSalvaged(_ store: TempStore, through n: Int) throws {
        let get = try Tool.run(["get", store.path, "d", "--json"])
        #expect(get.status == 0, "\(get)")
        let got = try Node(jsonText: (try get.json()["value"] ?? .null).serialized())
        #expect(try got == value(through: n), "\(get)")
        let verify = try Tool.run(["verify", store.path])
        #expect(verify.status == 0 && verify.stdout.contains("was moved aside by an earlier salvage"), "\(verify)")
        // Salvaging again finds nothing to do and changes nothing.
        let files = try store.files()
        let again = try Tool.run(["salvage", store.path])
        #expect(again.status == 0 && again.stdout.hasPrefix("nothing to salvage"), "\(again)")
        #expect(try store.files() == files)
    }

    @Test func aFlippedBitInTheCheckpoint() throws {
        let store = TempStore()
        try Self.makeStore(store)
        let ckpt = try #require(try store.files().first { $0.hasPrefix("ckpt-") })
        let size = try store.read(ckpt).count
        try Self.flip(store, ckpt, at: 64 + (size - 64) / 3)  // in the body
        let damaged = try store.read(ckpt)
        try Self.expectDamaged(store)

        let r = try Tool.run(["salvage", store.path, "--json"])
        #expect(r.status == 0, "\(r)")
        let j = try r.json()
        #expect(j["salvaged"] == .bool(true) && j["ok"] == .bool(true), "\(r)")
        #expect(j["damage"]?["file"] == .string(ckpt), "\(r)")
        // The checkpoint held the state through LSN 10; the records after it need it.
        #expect(j["lostCheckpointLSN"] == .number(10), "\(r)")
        #expect(j["lostRecords"] == .number(10) && j["lostLSNs"] == ["first": 11, "last": 20], "\(r)")
        #expect(j["lastLSN"] == .number(0), "\(r)")
        let moved = j["movedAside"]?.arrayValue?.compactMap { $0["movedTo"]?.stringValue } ?? []
        #expect(moved.contains(ckpt + ".broken"), "\(r)")
        #expect(try store.read(ckpt + ".broken") == damaged, "moved aside intact")
        for name in moved { #expect(try store.files().contains(name)) }
        try Self.expectSalvaged(store, through: 0)
    }

    @Test func aFlippedBitInTheManifest() throws {
        let store = TempStore()
        try Self.makeStore(store)
        try Self.flip(store, "MANIFEST", at: 20)
        try Self.expectDamaged(store)

        let r = try Tool.run(["salvage", store.path])
        #expect(r.status == 0, "\(r)")
        #expect(r.stdout.contains("damage: MANIFEST"), "\(r)")
        #expect(
            r.stdout.contains(
                "moved aside: MANIFEST → MANIFEST.broken (84 bytes); a new MANIFEST was built from the files present"),
            "\(r)")
        #expect(r.stdout.contains("lost: 0 records, 0 bytes"), "\(r)")
        #expect(r.stdout.contains("kept: the store's state through LSN 20"), "\(r)")
        #expect(try store.files().contains("MANIFEST.broken"))
        try Self.expectSalvaged(store, through: 20)
    }

    @Test func aFlippedBitMidSegment() throws {
        let store = TempStore()
        try Self.makeStore(store)
        let records = try Tool.run(["dump", store.path, "--json"]).jsonLines()
        let victim = try #require(records.first { $0["lsn"] == .number(15) })
        let segment = try #require(victim["file"]?.stringValue)
        let offset = try #require(victim["offset"]?.doubleValue)
        try Self.flip(store, segment, at: Int(offset) + 40)  // in the payload of LSN 15
        try Self.expectDamaged(store)

        let r = try Tool.run(["salvage", store.path])
        #expect(r.status == 0, "\(r)")
        #expect(r.stdout.contains("damage: \(segment) offset \(Int(offset)): record checksum mismatch"), "\(r)")
        #expect(r.stdout.contains("moved aside: \(segment) → \(segment).broken"), "\(r)")
        #expect(r.stdout.contains("bytes 0..<\(Int(offset)) kept as \(segment); lost 6 records (LSN 15…20)"), "\(r)")
        #expect(r.stdout.contains("lost: 6 records (LSN 15…20)"), "\(r)")
        #expect(r.stdout.contains("kept: the store's state through LSN 14") && r.stdout.contains("verify: ok"), "\(r)")
        #expect(try store.files().contains(segment + ".broken"))
        #expect(try store.read(segment).count == Int(offset), "the valid prefix is copied back")
        try Self.expectSalvaged(store, through: 14)
    }

    /// A record whose checksum holds but whose events do not decode (a bug, not bit rot): the
    /// log-level scan cannot see it, replay can; salvage cuts the log before it.
    @Test func aRecordThatPassesItsChecksumButDoesNotDecode() throws {
        let store = TempStore()
        try Self.makeStore(store)
        do {
            let log = try Log.open(directory: store.path)
            _ = try log.append([0xFF, 0xFF, 0xFF], type: EventCodec.recordType)
            _ = try log.append(
                EventCodec.encode([.serverOverwrite(path: "d/k99", node: .number(99), at: 0)]),
                type: EventCodec.recordType)
            try log.close()
        }
        try Self.expectDamaged(store)
        let r = try Tool.run(["salvage", store.path, "--json"])
        #expect(r.status == 0, "\(r)")
        let j = try r.json()
        #expect(
            j["lostRecords"] == .number(2) && j["lostLSNs"] == ["first": 21, "last": 22] && j["lastLSN"] == .number(20),
            "\(r)")
        let reason: String = j["damage"]?["reason"]?.stringValue ?? ""
        #expect(reason.contains("undecodable events"), "\(r)")
        try Self.expectSalvaged(store, through: 20)
    }

    @Test func aSoundStoreIsLeftAlone() throws {
        let store = TempStore()
        try Self.makeStore(store)
        let files = try store.files()
        let bytes = try files.map { try store.read($0) }
        let r = try Tool.run(["salvage", store.path])
        #expect(r.status == 0 && r.stdout.hasPrefix("nothing to salvage: the store is sound"), "\(r)")
        #expect(try store.files() == files && files.map { try store.read($0) } == bytes)
        let missing = TempStore()
        let m = try Tool.run(["salvage", missing.path])
        #expect(m.status == 1 && m.stderr.contains("no store at"), "\(m)")
    }
}
