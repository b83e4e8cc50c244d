// Unit tests of the building blocks and the basic API round trip.
import Testing
@_spi(HearthInternals) @testable import HearthLog
import HearthTesting

@Suite struct BuildingBlockTests {
    @Test func crc32cKnownVectors() {
        #expect(CRC32C.checksum(Array("123456789".utf8)) == 0xE306_9283)
        #expect(CRC32C.checksum([UInt8](repeating: 0, count: 32)) == 0x8A91_36AA)
        #expect(CRC32C.checksum([UInt8](repeating: 0xFF, count: 32)) == 0x62A8_AB43)
        #expect(CRC32C.checksum(Array(0..<32)) == 0x46DD_794E)
        let data = randomBytes(1000, seed: 7)
        #expect(CRC32C.extend(CRC32C.checksum(Array(data[..<333])), Array(data[333...])) == CRC32C.checksum(data))
        for v: UInt32 in [0, 1, 0xE306_9283, 0xFFFF_FFFF] { #expect(CRC32C.unmask(CRC32C.mask(v)) == v) }
        #expect(CRC32C.mask(0xE306_9283) != 0xE306_9283)
    }

    /// The processor's instruction (where ``CRC32C/usesHardware``) and the software give the
    /// same CRC for every length 0…300 at every alignment 0…7, for running values other than
    /// zero, and for the known vector; without the instruction both paths are the software.
    @Test func crc32cInstructionMatchesTheSoftware() {
        let data = randomBytes(512, seed: 11)
        data.withUnsafeBytes { all in
            #expect(
                CRC32C.extendInSoftware(0, UnsafeRawBufferPointer(rebasing: all[0..<9]))
                    == CRC32C.checksum(Array(data[0..<9])))
            for offset in 0..<8 {
                for length in 0...300 {
                    let slice = UnsafeRawBufferPointer(rebasing: all[offset..<(offset + length)])
                    for start: UInt32 in [0, 0xE306_9283] {
                        let hardware = CRC32C.extend(start, slice)
                        let software = CRC32C.extendInSoftware(start, slice)
                        if hardware != software {
                            Issue.record("offset \(offset) length \(length) from \(start): \(hardware) vs \(software)")
                            return
                        }
                    }
                }
            }
        }
        Array("123456789".utf8).withUnsafeBytes { #expect(CRC32C.extendInSoftware(0, $0) == 0xE306_9283) }
    }

    @Test func deflateRoundTripAndRawFallback() throws {
        let d = Deflater(level: 6)
        let inf = Inflater()
        for i in 0..<50 {
            let p = jsonPayload(i, extra: i % 7)
            if let c = d.compress(p) {
                #expect(c.count < p.count)
                #expect(inf.decompress(c, rawCount: p.count) == p)
                #expect(inf.decompress(c, rawCount: p.count + 1) == nil)
            }
        }
        #expect(d.compress(randomBytes(4096, seed: 3)) == nil, "incompressible data is stored raw")
        #expect(inf.decompress(randomBytes(100, seed: 4), rawCount: 100) == nil)
    }

    @Test func headersRoundTripAndRejectUnknownVersion() throws {
        let h = SegmentHeader(number: 7, baseLSN: 100, salt: 0xDEAD_BEEF, previousLastLSN: 99, previousChain: 42)
        var b = h.encode()
        #expect(try SegmentHeader.decode(b, file: "s") == h)
        b[8] = 2
        #expect(throws: LogError.unsupportedVersion(file: "s", offset: 8, version: 2)) {
            try SegmentHeader.decode(b, file: "s")
        }
        let m = Manifest(
            generation: 3, checkpoint: .init(id: 2, lsn: 50, bodyLength: 10, bodyCRC: 9),
            segments: [.init(number: 4, baseLSN: 40), .init(number: 5, baseLSN: 60)])
        var mb = m.encode()
        #expect(try Manifest.decode(mb) == m)
        mb[8] = 9
        #expect(throws: LogError.unsupportedVersion(file: "MANIFEST", offset: 8, version: 9)) {
            try Manifest.decode(mb)
        }
        let c = CheckpointHeader(id: 2, lsn: 50, bodyLength: 10, bodyCRC: 9)
        #expect(try CheckpointHeader.decode(c.encode(), file: "c") == c)
    }
}

@Suite struct LogBasicTests {
    @Test func appendReopenReplay() throws {
        let fs = SimulatedFileSystem(seed: 1)
        var expected: [[UInt8]] = []
        do {
            let log = try Log.open(directory: storeDir, fileSystem: fs, options: .test())
            #expect(log.recovery.createdStore)
            for i in 0..<200 {
                let p = i % 10 == 9 ? randomBytes(3000, seed: UInt64(i)) : jsonPayload(i)
                let lsn = try log.append(p, type: UInt8(i % 5))
                expected.append(p)
                #expect(lsn == LSN(i + 1))
            }
            #expect(log.durableLSN == 200)
            let files = try log.footprint().files
            #expect(files.count > 3, "small segments roll")
            try log.close()
            #expect(throws: LogError.closed) { try log.append([1], type: 0) }
        }
        let log = try Log.open(directory: storeDir, fileSystem: fs, options: .test())
        let all = try readAll(log)
        #expect(all.map(\.payload) == expected)
        #expect(all.map(\.lsn) == Array(1...200))
        #expect(all.map(\.type) == (0..<200).map { UInt8($0 % 5) })
        #expect(try readAll(log, after: 150).map(\.lsn) == Array(151...200))
        #expect(try log.append([9, 9], type: 1) == 201)
        let report = try Log.verify(directory: storeDir, fileSystem: fs)
        #expect(report.damage == nil)
        #expect(report.recordCount == 201)
        #expect(report.lastLSN == 201)
    }

    @Test func secondOpenerGetsStoreLocked() throws {
        let fs = SimulatedFileSystem(seed: 2)
        let log = try Log.open(directory: storeDir, fileSystem: fs, options: .test())
        // The same process: said so (another process gets `.storeLocked`).
        #expect(throws: LogError.storeAlreadyOpen(path: "/store/LOCK")) {
            try Log.open(directory: storeDir, fileSystem: fs, options: .test())
        }
        try log.close()
        let again = try Log.open(directory: storeDir, fileSystem: fs, options: .test())
        try again.close()
    }

    @Test func posixStoreLockPermissionsAndRoundTrip() throws {
        let dir = "/tmp/hearth-log-test-\(UInt64.random(in: 0 ... UInt64.max))"
        defer { removeTree(dir) }
        do {
            let log = try Log.open(directory: dir + "/a/b")
            #expect(throws: LogError.storeAlreadyOpen(path: dir + "/a/b/LOCK")) {
                try Log.open(directory: dir + "/a/b")
            }
            for i in 0..<20 { _ = try log.append(jsonPayload(i), type: 1) }
            _ = try log.installCheckpoint(lsn: 10, body: Array("state".utf8))
            try log.close()
        }
        #expect(fileMode(dir + "/a/b") == 0o700)
        #expect(fileMode(dir + "/a/b/MANIFEST") == 0o600)
        let log = try Log.open(directory: dir + "/a/b")
        #expect(try log.checkpoint?.readBody() == Array("state".utf8))
        #expect(try readAll(log, after: 10).count == 10)
        try log.close()
    }

    @Test func payloadLimitAndBatches() throws {
        let fs = SimulatedFileSystem(seed: 3)
        let log = try Log.open(directory: storeDir, fileSystem: fs, options: .test())
        #expect(throws: LogError.recordTooLarge(size: Log.maxPayloadSize + 1, limit: Log.maxPayloadSize)) {
            try log.append([UInt8](repeating: 0, count: Log.maxPayloadSize + 1), type: 0)
        }
        let big = randomBytes(20_000, seed: 9)  // larger than the 4 KiB segment: a segment of its own
        #expect(try log.append(big, type: 2) == 1)
        #expect(try log.appendBatch([([1, 2, 3], 1), ([4, 5], 2), ([], 3)]) == 4)
        let all = try readAll(log)
        #expect(all.map(\.payload) == [big, [1, 2, 3], [4, 5], []])
        #expect(all.map(\.type) == [2, 1, 2, 3])
        // Unknown types: skippable ones are skipped, others are an error.
        _ = try log.append([7], type: 200, skippable: true)
        #expect(try readAll(log).count == 5)
        let r = log.reader(after: 0, knownTypes: [1, 2, 3])
        var seen: [LSN] = []
        while let rec = try r.next() { seen.append(rec.lsn) }
        #expect(seen == [1, 2, 3, 4])
        _ = try log.append([8], type: 201)
        let r2 = log.reader(after: 4, knownTypes: [1, 2, 3])
        #expect(throws: LogError.self) { while try r2.next() != nil {} }
    }
}
