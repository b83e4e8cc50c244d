// `hearth verify`, `dump` and `stats` on a store whose last segment ends in zeros its writer
// preallocated (FORMAT.md §4.2) and did not cut off (a crash before close): the normal end of
// the log, so verify says ok (with a note), dump and stats show every record without a torn-tail
// note, and nothing is reported as dropped.
import Foundation
import Hearth
import HearthLog
import Testing

@Suite(.enabled(if: Tool.binary != nil, Tool.missingMessage))
struct PreallocatedTailToolTests {
    /// A closed store of 12 records whose last segment then gets `zeros` zero bytes appended, as
    /// a writer that crashed after preallocating leaves it.
    static func storeWithZeroTail(_ zeros: Int) throws -> (TempStore, String, Int) {
        let store = TempStore()
        let r = try Tool.apply(
            store.path, (1...12).map { #"{"op":"serverSet","path":"k\#($0)","value":"value \#($0)"}"# })
        try #require(r.status == 0, "\(r)")
        let seg = "seg-0000000000000001.log"
        let bytes = try store.read(seg)
        try store.write(seg, bytes + [UInt8](repeating: 0, count: zeros))
        return (store, seg, bytes.count)
    }

    @Test func verifyDumpAndStatsTreatAZeroTailAsTheEnd() throws {
        let (store, seg, end) = try Self.storeWithZeroTail(65536)
        let v = try Tool.run(["verify", store.path])
        #expect(v.status == 0, "\(v)")
        #expect(v.stdout.hasPrefix("ok: 1 segment, 12 records (LSN 1…12)"), "\(v)")
        #expect(!v.stdout.contains("torn tail"), "\(v)")
        #expect(
            v.stdout.contains("note: \(seg) ends in 65536 zero bytes preallocated by its writer after byte \(end)"),
            "\(v)")
        let j = try Tool.run(["verify", store.path, "--json"]).json()
        #expect(j["ok"] == true && j["tornTail"] == .null && j["lastLSN"] == 12)
        #expect(
            j["segments"] == [
                [
                    "file": .string(seg), "bytes": .number(Double(end + 65536)), "records": 12,
                    "validEnd": .number(Double(end)), "preallocatedTail": 65536,
                ]
            ])

        let dump = try Tool.run(["dump", store.path, "--json"])
        #expect(dump.status == 0 && dump.lines.count == 12 && !dump.stderr.contains("torn"), "\(dump)")
        #expect(try store.read(seg).count == end + 65536, "verify and dump modify nothing")

        let stats = try Tool.run(["stats", store.path, "--json"])
        #expect(stats.status == 0 && !stats.stderr.contains("torn tail"), "\(stats)")
        // The writable open behind stats cut the zeros off, and lost nothing.
        #expect(try store.read(seg).count == end)
        let opened = try Store.open(directory: store.path)
        defer { try? opened.close() }
        #expect(opened.lastLSN == 12 && opened.recovery.truncatedTail == nil)
    }
}
