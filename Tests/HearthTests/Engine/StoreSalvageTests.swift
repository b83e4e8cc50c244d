import Foundation
import Testing
@_spi(HearthInternals) @testable import Hearth
@_spi(HearthInternals) import HearthLog
import HearthTesting

/// `Store.Options.salvage` beyond what the log's scan sees: a checkpoint body
/// that fails its checksum is moved aside like a damaged checkpoint header, and a record whose
/// checksum holds but whose events cannot be replayed is cut off like a damaged record.
@Suite struct StoreSalvageTests {
    static func salvage(_ fs: any FileSystem) -> Store.Options {
        var o = options(fs)
        o.salvage = true
        o.lazyCacheLoad = false
        return o
    }

    /// k0…k9, a checkpoint, then k10…k19.
    static func build(_ fs: SimulatedFileSystem) throws {
        let store = try Store.open(directory: "/db", options: options(fs))
        for i in 0..<10 { try store.applyServerOverwrite(.number(Double(i)), at: try Path(validating: "d/k\(i)")) }
        _ = try store.compact()
        for i in 10..<20 { try store.applyServerOverwrite(.number(Double(i)), at: try Path(validating: "d/k\(i)")) }
        try store.close()
    }

    @Test func aCheckpointBodyThatFailsItsChecksumIsMovedAside() throws {
        let fs = SimulatedFileSystem(seed: 21)
        try Self.build(fs)
        let ckpt = try #require(fs.fileNames(in: "/db").first { $0.hasPrefix("ckpt-") })
        var bytes = fs.contents(of: "/db/" + ckpt)!
        bytes[64 + (bytes.count - 64) / 2] ^= 0x20
        fs.setContents(of: "/db/" + ckpt, to: bytes)
        var plain = options(fs)
        plain.lazyCacheLoad = false
        #expect(throws: StoreError.self) { _ = try Store.open(directory: "/db", options: plain) }

        let store = try Store.open(directory: "/db", options: Self.salvage(fs))
        let salvaged = try #require(store.recovery.salvaged)
        #expect(salvaged.damage.file == ckpt)
        #expect(salvaged.movedAside.contains(ckpt + ".broken"))
        #expect(fs.contents(of: "/db/" + ckpt + ".broken") == bytes)
        // The records after the checkpoint need its state: the longest valid prefix is empty.
        #expect(try store.value(at: "d") == .empty)
        try store.applyServerOverwrite(.number(1), at: "after")
        try store.close()
        let again = try Store.open(directory: "/db", options: options(fs))
        #expect(try again.value(at: "after") == .number(1))
        try again.close()
    }

    @Test func anUndecodableRecordIsCutOffWithEverythingAfterIt() throws {
        let fs = SimulatedFileSystem(seed: 22)
        try Self.build(fs)
        do {
            let log = try Log.open(directory: "/db", fileSystem: fs)
            _ = try log.append([0xFF, 0x00], type: EventCodec.recordType)  // checksum holds, events do not decode
            _ = try log.append(
                EventCodec.encode([.serverOverwrite(path: "d/k99", node: .number(99), at: 0)]),
                type: EventCodec.recordType)
            try log.close()
        }
        do {
            _ = try Store.open(directory: "/db", options: options(fs))
            Issue.record("an undecodable record was replayed")
        } catch {
            guard case .corruptRecord(_, _, let lsn, _) = error else { Issue.record("wrong error: \(error)"); return }
            #expect(lsn == 21)
        }
        let store = try Store.open(directory: "/db", options: Self.salvage(fs))
        let salvaged = try #require(store.recovery.salvaged)
        #expect(salvaged.damage.error.description.contains("undecodable events"))
        #expect(salvaged.movedAside.count == 1 && salvaged.movedAside[0].hasSuffix(".broken"))
        #expect(store.recovery.lastLSN == 20)
        let expected = try Node(jsonText: "{" + (0..<20).map { #""k\#($0)":\#($0)"# }.joined(separator: ",") + "}")
        #expect(try store.value(at: "d") == expected)
        // The next commit takes LSN 21 again: the cut records exist only in the .broken file.
        #expect(try store.applyServerOverwrite(.number(1), at: "after") == 21)
        try store.close()
    }
}
