import Foundation
import Testing
@_spi(HearthInternals) @testable import Hearth
import HearthLog
import HearthTesting

/// `Store.Options.readOnly`: the last consistent state of a store another
/// `Store` holds open, read without its lock and without a single write — every mutating
/// file-system call fails while the read-only store opens, reads and closes.
@Suite struct ReadOnlyStoreTests {
    /// Every operation that changes something on disk (or takes the lock).
    static let mutating: [FileOperation] = [
        .createDirectory, .create, .write, .sync, .truncate, .rename, .unlink, .syncDirectory, .lock,
    ]

    static func forbidWrites(_ fs: SimulatedFileSystem) {
        for op in mutating { fs.injectFault(op, .permissionDenied, sticky: true) }
    }

    static func readOnly(_ fs: any FileSystem) -> Store.Options {
        var o = options(fs)
        o.readOnly = true
        o.lazyCacheLoad = false
        return o
    }

    /// A store with a checkpoint and records after it, every part of the state set.
    static func fill(_ store: Store) throws {
        try store.applyServerOverwrite(json(#"{"a":1,"b":{"c":"x"},"n":[1,2,3]}"#), at: "root")
        let w = try store.saveWrite(.set(.string("pending")), at: "root/p")
        try store.trackQuery(
            at: QueryLocation(path: "root", query: try QuerySpec(orderBy: .key).limitToFirst(2)), complete: true,
            active: true)
        try store.saveAuth(AuthToken(token: "t0k3n", expiresAt: 42))
        _ = try store.compact()
        try store.applyServerMerge([ChildUpdate(path: "b/d", node: .bool(true))], at: "root")
        try store.ackWrite(w)
        _ = try store.saveWrite(.set(.number(5)), at: "root/q")
        _ = try store.queueOnDisconnect(.remove, at: "presence")
    }

    @Test func readsWhatAnotherStoreHoldsWithoutWritingAByte() throws {
        let fs = SimulatedFileSystem(seed: 5)
        let writer = try Store.open(directory: "/db", options: options(fs))
        try Self.fill(writer)
        let files = fs.fileNames(in: "/db")
        let bytes = files.map { fs.contents(of: "/db/" + $0) }

        Self.forbidWrites(fs)
        let reader = try Store.open(directory: "/db", options: Self.readOnly(fs))
        #expect(try reader.state() == writer.state())
        #expect(try reader.value(at: "root") == writer.value(at: "root"))
        let q = try QuerySpec(orderBy: .key).limitToFirst(2)
        #expect(try reader.query(q, at: "root").window.keys == writer.query(q, at: "root").window.keys)
        #expect(try reader.query(q, at: "root").complete)
        #expect(reader.lastLSN == writer.lastLSN)
        #expect(try reader.stats().footprintBytes == writer.stats().footprintBytes)
        // The active query stays active: the state is what the log holds.
        #expect(reader.trackedQueries().first?.active == true)
        // Writes are refused, without poisoning anything.
        do {
            try reader.applyServerOverwrite(.number(1), at: "x")
            Issue.record("a read-only store accepted a commit")
        } catch {
            guard case .log(.readOnly) = error else { Issue.record("wrong error: \(error)"); return }
            #expect(error.description.contains("read-only"))
        }
        do {
            _ = try reader.compact()
            Issue.record("a read-only store compacted")
        } catch {
            guard case .log(.readOnly(let path)) = error else { Issue.record("wrong error: \(error)"); return }
            #expect(path == "/db")
        }
        try reader.close()
        fs.clearFaults()
        #expect(fs.fileNames(in: "/db") == files)
        #expect(files.map { fs.contents(of: "/db/" + $0) } == bytes)

        // The writer goes on; a new read-only open sees its newer commits.
        try writer.applyServerOverwrite(.number(9), at: "root/a")
        Self.forbidWrites(fs)
        let again = try Store.open(directory: "/db", options: Self.readOnly(fs))
        #expect(try again.value(at: "root/a") == .number(9))
        try again.close()
        fs.clearFaults()
        try writer.close()
    }

    /// The writer's roll cuts its active segment's preallocated zeros off while a read-only open
    /// is reading it, before its new MANIFEST is published: the open reads again, and sees the
    /// writer's state (not damage).
    @Test func aSegmentCutUnderTheOpenIsReadAgain() throws {
        let fs = SimulatedFileSystem(seed: 7)
        let writer = try Store.open(directory: "/db", options: options(fs))
        try Self.fill(writer)
        let scan = try Log.verify(directory: "/db", fileSystem: fs)
        let last = try #require(scan.segments.last)
        #expect(last.preallocatedTail > 0, "the writer's active segment ends in zeros")
        fs.cutBeforeNextRead(pathContains: last.file, to: last.validEnd)
        let reader = try Store.open(directory: "/db", options: Self.readOnly(fs))
        #expect(fs.contents(of: "/db/" + last.file)?.count == Int(last.validEnd), "the cut was made")
        #expect(try reader.state() == writer.state())
        try reader.close()
        try writer.close()
    }

    @Test func aTornTailIsLeftInPlaceAndNotRead() throws {
        let fs = SimulatedFileSystem(seed: 6)
        let expected: StoreState
        do {
            let writer = try Store.open(directory: "/db", options: options(fs))
            try Self.fill(writer)
            expected = try writer.state()
            try writer.close()
        }
        let segment = fs.fileNames(in: "/db").filter { $0.hasPrefix("seg-") }.last!
        let sound = fs.contents(of: "/db/" + segment)!
        let torn =
            sound + [0x12, 0x34, 0x56, 0x78, 0x40, 0, 0, 0, 0x40, 0, 0, 0, 1, 0, 0, 0]
            + [UInt8](repeating: 0xAB, count: 20)
        fs.setContents(of: "/db/" + segment, to: torn)

        Self.forbidWrites(fs)
        let reader = try Store.open(directory: "/db", options: Self.readOnly(fs))
        #expect(try reader.state() == expected)
        #expect(reader.recovery.truncatedTail == nil)
        let ignored = try #require(reader.recovery.ignoredTornTail)
        #expect(ignored.file == segment && ignored.offset == UInt64(sound.count) && ignored.bytes == 36)
        try reader.close()
        fs.clearFaults()
        #expect(fs.contents(of: "/db/" + segment) == torn)
    }

    @Test func damageAndMissingStoresFailWithoutWriting() throws {
        let fs = SimulatedFileSystem(seed: 7)
        Self.forbidWrites(fs)
        do {
            _ = try Store.open(directory: "/nowhere", options: Self.readOnly(fs))
            Issue.record("a read-only open created a store")
        } catch {
            guard case .log(.storeMissing) = error else { Issue.record("wrong error: \(error)"); return }
        }
        fs.clearFaults()
        do {
            let writer = try Store.open(directory: "/db", options: options(fs))
            try Self.fill(writer)
            try writer.close()
        }
        var manifest = fs.contents(of: "/db/MANIFEST")!
        manifest[30] ^= 1
        fs.setContents(of: "/db/MANIFEST", to: manifest)
        Self.forbidWrites(fs)
        do {
            _ = try Store.open(directory: "/db", options: Self.readOnly(fs))
            Issue.record("a damaged MANIFEST was opened")
        } catch {
            #expect(error.isCorruption, "\(error)")
        }
        fs.clearFaults()
        #expect(fs.contents(of: "/db/MANIFEST") == manifest)
    }
}
