// The worked example of FORMAT.md Appendix A, byte for byte: if this test fails, the format changed
// (bump the version and update FORMAT.md) or the example in FORMAT.md is stale.
import Testing
@_spi(HearthInternals) @testable import HearthLog
import HearthTesting

func hex(_ b: ArraySlice<UInt8>) -> String {
    b.map {
        let s = String($0, radix: 16); return s.count == 1 ? "0" + s : s
    }.joined(separator: " ")
}

@Suite struct GoldenFormatTests {
    @Test func appendixAExample() throws {
        let fs = SimulatedFileSystem(seed: 2024)
        let log = try Log.open(directory: storeDir, fileSystem: fs, options: .test(segmentSize: 1 << 20))
        _ = try log.append(Array("hello".utf8), type: 7)
        _ = try log.append(Array(String(repeating: "{\"a\":1}", count: 8).utf8), type: 8)
        try log.close()
        let seg = try #require(fs.contents(of: "/store/seg-0000000000000001.log"))
        let man = try #require(fs.contents(of: "/store/MANIFEST"))
        var lines: [String] = []
        for start in stride(from: 0, to: seg.count, by: 16) {
            lines.append(hex(seg[start..<min(seg.count, start + 16)]))
        }
        let segDump = lines.joined(separator: "\n")
        lines = []
        for start in stride(from: 0, to: man.count, by: 16) {
            lines.append(hex(man[start..<min(man.count, start + 16)]))
        }
        let manDump = lines.joined(separator: "\n")
        print("SEGMENT\n\(segDump)\nMANIFEST\n\(manDump)")
        #expect(segDump == Self.segment)
        #expect(manDump == Self.manifest)
    }

    static let segment = """
        48 52 54 48 53 45 47 01 01 00 01 00 40 00 00 00
        01 00 00 00 00 00 00 00 01 00 00 00 00 00 00 00
        d5 ec 8e f8 ec 8f 6d 9f 00 00 00 00 00 00 00 00
        00 00 00 00 00 00 00 00 00 00 00 00 b5 b6 36 aa
        73 b4 a3 71 05 00 00 00 05 00 00 00 07 00 00 00
        01 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00
        68 65 6c 6c 6f 00 00 00 ef ab 87 a3 0c 00 00 00
        38 00 00 00 08 01 00 00 02 00 00 00 00 00 00 00
        01 00 00 00 00 00 00 00 ab 56 4a 54 b2 32 ac ad
        26 95 02 00 00 00 00 00
        """
    static let manifest = """
        48 52 54 48 4d 41 4e 01 01 00 00 00 01 00 00 00
        02 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00
        00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00
        00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00
        01 00 00 00 00 00 00 00 01 00 00 00 00 00 00 00
        27 8c 5e 15
        """

    /// The formulas of FORMAT.md §2, §4.1, §5.3, §5.5 and §6 applied by hand to the example bytes.
    @Test func appendixAFormulas() throws {
        func bytes(_ dump: String) -> [UInt8] {
            dump.split(whereSeparator: { $0 == " " || $0 == "\n" }).map { UInt8($0, radix: 16)! }
        }
        func le32(_ b: [UInt8], _ o: Int) -> UInt32 { (0..<4).reduce(0) { $0 | UInt32(b[o + $1]) << (8 * $1) } }
        func mask(_ c: UInt32) -> UInt32 { ((c >> 15) | (c << 17)) &+ 0xA282_EAD8 }
        let seg = bytes(Self.segment), man = bytes(Self.manifest)
        #expect(mask(CRC32C.checksum(Array(seg[0..<60]))) == le32(seg, 60))
        let salt = Array(seg[32..<40]), number = Array(seg[16..<24])
        // Record 1 at offset 64: 32-byte header + 5 bytes + 3 bytes padding.
        #expect(mask(CRC32C.checksum(salt + number + Array(seg[68..<96]) + Array(seg[96..<101]))) == le32(seg, 64))
        // Record 2 at offset 104: 12 stored bytes of raw DEFLATE inflating to 56.
        #expect(mask(CRC32C.checksum(salt + number + Array(seg[108..<136]) + Array(seg[136..<148]))) == le32(seg, 104))
        #expect(
            Inflater().decompress(Array(seg[136..<148]), rawCount: 56)
                == Array(String(repeating: "{\"a\":1}", count: 8).utf8))
        // Chain: 0 → after record 1 → after record 2.
        func chain(_ prev: UInt32, _ crc: UInt32) -> UInt32 {
            CRC32C.checksum(
                (0..<4).map { UInt8(truncatingIfNeeded: prev >> (8 * $0)) }
                    + (0..<4).map { UInt8(truncatingIfNeeded: crc >> (8 * $0)) })
        }
        let c2 = chain(chain(0, le32(seg, 64)), le32(seg, 104))
        print("chain after record 2: 0x\(String(c2, radix: 16))")
        #expect(mask(CRC32C.checksum(Array(man[0..<80]))) == le32(man, 80))
    }
}
