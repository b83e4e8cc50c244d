// The footprint beside an install that deletes files on another thread.
import Testing
@_spi(HearthInternals) @testable import HearthLog
import HearthTesting

@Suite struct FootprintRaceTests {
    /// A file the footprint listed but an install deleted before it was measured (a background
    /// maintenance pass beside a caller's `compact`) holds no bytes: it is left out, not an I/O
    /// error. Deleting a listed segment directly stands for that install, deterministically.
    @Test func aFileDeletedAfterTheListIsLeftOut() throws {
        let fs = SimulatedFileSystem(seed: 3)
        let log = try Log.open(directory: storeDir, fileSystem: fs, options: .test())
        for i in 0..<200 { _ = try log.append(jsonPayload(i), type: 1) }
        let before = try log.footprint()
        let first = try #require(before.files.first { $0.name.hasPrefix("seg-") })
        try fs.unlink(storeDir + "/" + first.name)
        let after = try log.footprint()
        #expect(!after.files.contains { $0.name == first.name })
        #expect(after.total == before.total - first.bytes)
    }
}
