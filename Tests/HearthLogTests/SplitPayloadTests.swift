// A payload whose tail is deflated before its head is known (SplitPayload.swift): the record
// must be the one `head ‖ tail` gives — the same raw payload, one complete raw DEFLATE stream
// when compressed, raw when compressing does not pay — in memory, through a real zlib inflate,
// and through the log and a reopen.
import Testing
@_spi(HearthInternals) @testable import HearthLog
import HearthTesting

@Suite struct SplitPayloadTests {
    /// Heads of 0…300 bytes (and the 65,535-byte limit), tails compressible or not.
    private func cases() -> [(head: [UInt8], tail: [UInt8])] {
        var out: [(head: [UInt8], tail: [UInt8])] = []
        for i in 0..<60 {
            let head = randomBytes([0, 1, 3, 11, 300][i % 5], seed: UInt64(i))
            let tail = i % 3 == 2 ? randomBytes(200 + i, seed: UInt64(1000 + i)) : jsonPayload(i, extra: i % 9)
            out.append((head, tail))
        }
        out.append((randomBytes(SplitPayload.maxHead, seed: 1), jsonPayload(1, extra: 40)))
        return out
    }

    @Test func theStreamInflatesToHeadAndTail() throws {
        let d = Deflater(level: 6, windowBits: 12, memLevel: 3)
        let inf = Inflater()
        var compressed = 0
        for (head, tail) in cases() {
            let split = SplitPayload(head: head, tail: tail, deflatedTail: d.compress(tail))
            let raw = head + tail
            #expect(split.raw() == raw)
            guard let stream = split.compressedStream() else {
                // Raw only when the tail did not deflate, or the stream would not be smaller.
                if let t = split.deflatedTail { #expect(5 + head.count + t.count >= raw.count) }
                continue
            }
            compressed += 1
            #expect(stream.count < raw.count, "compressed implies smaller (FORMAT.md §5.2)")
            #expect(inf.decompress(stream, rawCount: raw.count) == raw, "head \(head.count), tail \(tail.count)")
            // One byte more or less than the stream's raw length is refused, as for any record.
            #expect(inf.decompress(stream, rawCount: raw.count + 1) == nil)
            #expect(inf.decompress(Array(stream.dropLast()), rawCount: raw.count) == nil)
        }
        #expect(compressed > 20, "most cases compress")
    }

    @Test func aHeadBeyondAStoredBlockIsStoredRaw() {
        let tail = jsonPayload(3, extra: 30)
        let split = SplitPayload(
            head: randomBytes(SplitPayload.maxHead + 1, seed: 2), tail: tail,
            deflatedTail: Deflater(level: 6).compress(tail))
        #expect(split.compressedStream() == nil)
    }

    @Test func theLogStoresTheSameRecordAsForTheWholePayload() throws {
        let fs = SimulatedFileSystem(seed: 5)
        var expected: [[UInt8]] = []
        var flags: [Bool] = []
        do {
            let log = try Log.open(directory: storeDir, fileSystem: fs, options: .test())
            for (i, (head, tail)) in cases().enumerated() where head.count < 1000 {
                let pending = try log.submit(
                    SplitPayload(head: head, tail: tail, deflatedTail: log.deflateTail(tail)), type: UInt8(i % 4),
                    durability: i % 2 == 0 ? .full : .buffered)
                try log.wait(pending)
                expected.append(head + tail)
                flags.append(i % 4 == 0)
            }
            try log.close()
        }
        let log = try Log.open(directory: storeDir, fileSystem: fs, options: .test())
        let r = log.reader(after: 0)
        var got: [[UInt8]] = []
        var compressed = 0
        while let rec = try r.next() {
            got.append(rec.payload)
            #expect(rec.rawSize == rec.payload.count)
            if rec.flags & Layout.flagCompressed != 0 {
                compressed += 1
                #expect(rec.storedSize < rec.rawSize)
            }
        }
        #expect(got == expected)
        #expect(compressed > 10, "records holding a stored block and the tail's stream were written and read")
    }

    /// `rawPayloadLimit`: a payload (or a split payload's tail) shorter than the limit is stored
    /// raw however well it would deflate, one at the limit is compressed, and both read back.
    @Test func payloadsUnderTheRawLimitAreStoredRaw() throws {
        let fs = SimulatedFileSystem(seed: 7)
        var options = Log.Options.test()
        options.rawPayloadLimit = 600
        let short = Array(repeating: UInt8(ascii: "a"), count: 599)
        let long = Array(repeating: UInt8(ascii: "a"), count: 600)
        do {
            let log = try Log.open(directory: storeDir, fileSystem: fs, options: options)
            #expect(log.deflateTail(short) == nil)
            let tail = try #require(log.deflateTail(long))
            #expect(tail.count < long.count)
            for payload in [short, long] { try log.wait(try log.submit(payload, type: 1, durability: .full)) }
            try log.wait(try log.submit(SplitPayload(head: [1, 2], tail: long, deflatedTail: tail), type: 2))
            try log.close()
        }
        let log = try Log.open(directory: storeDir, fileSystem: fs, options: .test())
        let r = log.reader(after: 0)
        var got: [(payload: [UInt8], compressed: Bool)] = []
        while let rec = try r.next() { got.append((rec.payload, rec.flags & Layout.flagCompressed != 0)) }
        #expect(got.map(\.payload) == [short, long, [1, 2] + long])
        #expect(got.map(\.compressed) == [false, true, true])
        try log.close()
        var negative = Log.Options.test()
        negative.rawPayloadLimit = -1
        #expect(throws: LogError.self) { try Log.open(directory: storeDir + "-n", fileSystem: fs, options: negative) }
    }

    @Test func aLogStoringRecordsRawDeflatesNoTail() throws {
        let fs = SimulatedFileSystem(seed: 6)
        var options = Log.Options.test()
        options.compressionLevel = 0
        let log = try Log.open(directory: storeDir, fileSystem: fs, options: options)
        #expect(log.deflateTail(jsonPayload(1, extra: 20)) == nil)
        try log.close()
    }
}
