// Groups copied over the preallocated zeros (StoreFile.overwrite, LogCore+Framing.swift) and the
// POSIX file's shared window behind it (SharedWindow.swift). The rules under test:
// - a group not synced at once (batched, buffered) that lies inside the zeros the last
//   preallocation step wrote is an overwrite; a synced group (full) is a write; the simulated
//   file stops the test if an overwrite ever passes the end of the file;
// - what was overwritten is what recovery reads, after a process crash (the page cache keeps
//   it), and after a power cut once synced;
// - the real file: bytes copied through the mapping across window boundaries, forwards and
//   backwards, read back by pread at once and after close, and kept by its sync.
import Testing
@_spi(HearthInternals) @testable import HearthLog
import HearthModel
@testable import HearthTesting

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

@Suite struct OverwriteTests {
    /// Appends `count` records under `tier` to a fresh log in a 1 MiB segment.
    static func appended(
        _ count: Int, tier: Durability, seed: UInt64
    ) throws -> (SimulatedFileSystem, Log, [[UInt8]]) {
        let fs = SimulatedFileSystem(seed: seed)
        let log = try Log.open(
            directory: storeDir, fileSystem: fs, options: .test(segmentSize: 1 << 20, durability: tier))
        var history: [[UInt8]] = []
        for i in 0..<count {
            history.append(jsonPayload(i, seed: seed, extra: 8))
            _ = try log.append(history.last!, type: 1)
        }
        return (fs, log, history)
    }

    /// Reopens the log and checks it recovers exactly `history`.
    static func expectRecovered(_ fs: SimulatedFileSystem, _ history: [[UInt8]], segmentSize: Int = 1 << 20) throws {
        let again = try Log.open(directory: storeDir, fileSystem: fs, options: .test(segmentSize: segmentSize))
        #expect(try recoveredHistory(again) == history)
        try again.close()
    }

    @Test(arguments: [Durability.batched(interval: .seconds(60)), .buffered])
    func groupsNotSyncedAtOnceOverwriteTheZeros(tier: Durability) throws {
        let (fs, log, history) = try Self.appended(300, tier: tier, seed: 0x0E_0001)
        // Every group but those that extend the preallocation (the first, and one per step).
        #expect(fs.overwriteCount >= 290, "\(fs.overwriteCount) of 300 groups overwrote")
        // A process crash keeps the page cache: every acknowledged record is there.
        fs.powerCut(mode: .processCrash)
        _ = log
        try Self.expectRecovered(fs, history)
    }

    @Test func syncedGroupsWrite() throws {
        let (fs, log, history) = try Self.appended(100, tier: .full, seed: 0x0E_0002)
        #expect(fs.overwriteCount == 0)
        fs.powerCut(mode: .dropAllUnsynced)
        _ = log
        try Self.expectRecovered(fs, history)
    }

    @Test func overwrittenRecordsSurviveAPowerCutOnceFlushed() throws {
        let (fs, log, history) = try Self.appended(200, tier: .buffered, seed: 0x0E_0003)
        try log.flush()
        #expect(fs.overwriteCount > 0)
        fs.powerCut(mode: .dropAllUnsynced)
        try Self.expectRecovered(fs, history)
    }

    @Test func rollsAndCloseLeaveOnlyRecords() throws {
        // Small segments: many rolls, each cutting the zeros off the segment it seals.
        let fs = SimulatedFileSystem(seed: 0x0E_0004)
        let log = try Log.open(
            directory: storeDir, fileSystem: fs, options: .test(segmentSize: 64 << 10, durability: .buffered))
        var history: [[UInt8]] = []
        for i in 0..<1500 {
            history.append(jsonPayload(i, seed: 4, extra: 8))
            _ = try log.append(history.last!, type: 1)
        }
        try log.close()
        #expect(fs.overwriteCount > 1000)
        let report = try Log.verify(directory: storeDir, fileSystem: fs)
        #expect(report.damage == nil && report.segments.count > 3)
        #expect(report.segments.allSatisfy { $0.preallocatedTail == 0 })
        try Self.expectRecovered(fs, history, segmentSize: 64 << 10)
    }

    @Test func theSimulatorKnowsWhichBytesWereWritten() {
        var n = SimInode()
        n.write([1, 2, 3], 0)
        #expect(n.holdsWritten(0..<3) && !n.holdsWritten(0..<4))
        n.write([9], 10)  // 3..<10 is a hole
        #expect(n.holes == [3..<10])
        #expect(n.holdsWritten(10..<11) && !n.holdsWritten(2..<4) && !n.holdsWritten(9..<11))
        n.write([7, 7], 5)  // splits it
        #expect(n.holes == [3..<5, 7..<10])
        #expect(n.holdsWritten(5..<7))
        n.truncate(8)
        #expect(n.holes == [3..<5, 7..<8])
        n.truncate(12)  // growing adds one
        #expect(n.holes == [3..<5, 7..<8, 8..<12])
        n.write([UInt8](repeating: 0, count: 12), 0)
        #expect(n.holes.isEmpty && n.holdsWritten(0..<12))
    }

    // MARK: The real file

    @Test func thePOSIXFileCopiesThroughItsWindowAndReadsBack() throws {
        let dir = "/tmp/hearth-overwrite-\(UInt64.random(in: 0 ... UInt64.max))"
        let fs = POSIXFileSystem()
        try fs.createDirectory(dir)
        defer { removeTree(dir) }
        let path = dir + "/f"
        let size = 3 << 20 + 4096
        let file = try fs.open(path, mode: .createTruncate)
        try file.write([UInt8](repeating: 0, count: size), at: 0)
        let posix = try #require(file as? POSIXFile)
        #if os(Linux)
        // /tmp on ext4, XFS or tmpfs maps; anywhere else the file writes, and this checks that.
        if !posix.mapsOverwrites { print("OverwriteTests: /tmp's file system is not mapped; pwrite checked") }
        #else
        #expect(!posix.mapsOverwrites)
        #endif
        var expected = [UInt8](repeating: 0, count: size)
        var g = SeededRandom(seed: 0x0E_0005)
        // Forwards inside a window, across a boundary, at the very end, then backwards.
        let spots: [(offset: Int, count: Int)] = [
            (16, 100), (4000, 200), ((1 << 20) - 50, 100), ((2 << 20) + 7, 70_000), (size - 33, 33),
            (5, 11), ((1 << 20) + 1, 1), (0, 0),
        ]
        for (o, n) in spots {
            let bytes = (0..<n).map { _ in UInt8(truncatingIfNeeded: g.next()) }
            try file.overwrite(bytes, at: UInt64(o))
            expected.replaceSubrange(o..<(o + n), with: bytes)
            #expect(try file.read(at: UInt64(o), count: n) == bytes, "read back at \(o)")
        }
        #expect(try file.size() == UInt64(size), "an overwrite changes no size")
        try file.sync()
        try file.close()
        #expect(throws: FileSystemError.self) { try file.overwrite([1], at: 0) }
        let reread = try fs.open(path, mode: .readOnly)
        #expect(try reread.read(at: 0, count: size + 10) == expected)
        try reread.close()
    }

    @Test func aReadOnlyFileHasNoWindow() throws {
        let dir = "/tmp/hearth-overwrite-\(UInt64.random(in: 0 ... UInt64.max))"
        let fs = POSIXFileSystem()
        try fs.createDirectory(dir)
        defer { removeTree(dir) }
        let created = try fs.open(dir + "/f", mode: .createTruncate)
        try created.close()
        let file = try #require(try fs.open(dir + "/f", mode: .readOnly) as? POSIXFile)
        #expect(!file.mapsOverwrites)
        try file.close()
    }

    @Test func onlyInPlaceFileSystemsAreMapped() {
        #if os(Linux)
        for magic: UInt64 in [0xEF53, 0x5846_5342, 0x0102_1994] {
            #expect(SharedWindow.overwritesInPlace(magic: magic))
        }
        // Btrfs, F2FS, ZFS, bcachefs, overlayfs, NFS, and "could not ask".
        for magic: UInt64 in [0x9123_683E, 0xF2F5_2010, 0x2FC1_2FC1, 0xCA45_1A4E, 0x794C_7630, 0x6969, 0] {
            #expect(!SharedWindow.overwritesInPlace(magic: magic))
        }
        #endif
    }
}
