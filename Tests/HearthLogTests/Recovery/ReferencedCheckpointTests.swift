// Checkpoint files kept live by a later checkpoint that reads chunks from them (FORMAT.md §6,
// §8.3): the MANIFEST's format 2 entries, open keeping them and removing the rest, installs
// dropping what they no longer keep only after the switch, a crash at every call of such an
// install in every power-cut mode, and salvage.
import Testing
@_spi(HearthInternals) @testable import HearthLog
import HearthModel
import HearthTesting

/// The body a test checkpoint writes: its own payload list, then the ids it keeps, so that a
/// recovered checkpoint says which files it needs.
private func referencingBody(_ payloads: [[UInt8]], keeps: Set<UInt64>) -> [UInt8] {
    encodeBody(payloads + [keeps.sorted().map { UInt8($0) }])
}

/// A closed store on `fs` whose checkpoint 1 holds the first `firstCheckpoint` of `records`
/// payloads and whose checkpoint 2, of all of them, keeps checkpoint 1. Returns the payloads.
private func storeKeepingCheckpointOne(
    _ fs: SimulatedFileSystem, records: Int, firstCheckpoint: Int
) throws -> [[UInt8]] {
    let log = try Log.open(directory: storeDir, fileSystem: fs, options: .test())
    let payloads = (0..<records).map { jsonPayload($0) }
    for (i, p) in payloads.enumerated() {
        _ = try log.append(p, type: 1)
        if i + 1 == firstCheckpoint {
            let first = Array(payloads.prefix(firstCheckpoint))
            _ = try log.installCheckpoint(lsn: LSN(firstCheckpoint)) { try $0.write(referencingBody(first, keeps: [])) }
        }
    }
    _ = try log.installCheckpoint(lsn: LSN(records)) { w in
        w.keep(1)
        try w.write(referencingBody(payloads, keeps: [1]))
    }
    try log.close()
    return payloads
}

@Suite struct ReferencedCheckpointTests {
    @Test func manifestFormatTwoOnlyWithReferences() throws {
        let ckpt = Manifest.CheckpointRef(id: 9, lsn: 40, bodyLength: 100, bodyCRC: 7)
        let segs = [Manifest.Entry(number: 3, baseLSN: 41)]
        let plain = Manifest(generation: 5, checkpoint: ckpt, segments: segs)
        let bytes = plain.encode()
        #expect(bytes.count == 68 + 16)
        #expect(bytes[8] == 1 && bytes[9] == 0, "no reference: format 1, as builds before it write")
        #expect(try Manifest.decode(bytes) == plain)

        let refs = [
            Manifest.CheckpointRef(id: 2, lsn: 10, bodyLength: 50, bodyCRC: 1),
            Manifest.CheckpointRef(id: 7, lsn: 30, bodyLength: 60, bodyCRC: 2),
        ]
        let referencing = Manifest(generation: 5, checkpoint: ckpt, segments: segs, references: refs)
        let b2 = referencing.encode()
        #expect(b2.count == 68 + 16 + 32 * 2)
        #expect(b2[8] == 2 && b2[52] == 2)
        #expect(try Manifest.decode(b2) == referencing)

        // Out of order, at or above the checkpoint's id, or without a checkpoint: refused.
        for bad in [
            Manifest(generation: 5, checkpoint: ckpt, segments: segs, references: refs.reversed()),
            Manifest(
                generation: 5, checkpoint: ckpt, segments: segs,
                references: [.init(id: 9, lsn: 1, bodyLength: 1, bodyCRC: 0)]),
            Manifest(
                generation: 5, checkpoint: ckpt, segments: segs,
                references: [.init(id: 3, lsn: 41, bodyLength: 1, bodyCRC: 0)]),
            Manifest(generation: 5, checkpoint: nil, segments: segs, references: refs),
        ] {
            #expect(throws: LogError.self) { try Manifest.decode(bad.encode()) }
        }
        // A count that disagrees with the file size is damage, and so is a flipped byte.
        var short = b2
        short.removeLast(36)
        #expect(throws: LogError.self) { try Manifest.decode(short) }
        var flipped = b2
        flipped[64 + 16 + 3] ^= 1
        #expect(throws: LogError.self) { try Manifest.decode(flipped) }
    }

    @Test func keptFilesStayLiveTheRestGoAfterTheSwitch() throws {
        let fs = SimulatedFileSystem(seed: 47)
        var log = try Log.open(directory: storeDir, fileSystem: fs, options: .test())
        var payloads: [[UInt8]] = []
        func append(_ n: Int) throws {
            for i in 0..<n {
                let p = jsonPayload(payloads.count + i)
                _ = try log.append(p, type: 1)
            }
            payloads += (0..<n).map { jsonPayload(payloads.count + $0) }
        }
        func install(keeping: Set<UInt64>) throws -> Checkpoint {
            try log.installCheckpoint(lsn: LSN(payloads.count)) { w in
                for id in keeping { w.keep(id) }
                try w.write(referencingBody(payloads, keeps: keeping))
            }
        }
        func checkpointFiles() -> [String] {
            fs.fileNames(in: storeDir).filter { $0.hasPrefix("ckpt-") }.sorted()
        }
        try append(5)
        #expect(try install(keeping: []).id == 1)
        try append(5)
        #expect(try install(keeping: [1]).id == 2)
        #expect(checkpointFiles() == [Layout.checkpointName(1), Layout.checkpointName(2)])
        #expect(log.referencedCheckpoints.map(\.id) == [1])
        #expect(try log.footprint().files.map(\.name).contains(Layout.checkpointName(1)))
        // A file that is not live cannot be kept: refused before anything durable changes.
        #expect(throws: LogError.self) { _ = try install(keeping: [5]) }
        #expect(!fs.fileNames(in: storeDir).contains { $0.hasSuffix(".tmp") })
        #expect(checkpointFiles() == [Layout.checkpointName(1), Layout.checkpointName(2)])

        // Reopen: the referenced file is live (not a stray), its header checked, its body read.
        try log.close()
        log = try Log.open(directory: storeDir, fileSystem: fs, options: .test())
        #expect(log.recovery.removedStrayFiles.isEmpty)
        #expect(log.referencedCheckpoints.map(\.id) == [1])
        #expect(try decodeBody(log.referencedCheckpoints[0].readBody())?.count == 5 + 1)
        #expect(try Log.verify(directory: storeDir, fileSystem: fs).referencedCheckpoints == [Layout.checkpointName(1)])

        // Keep the older one, drop the current: the current goes, the kept one stays.
        try append(3)
        #expect(try install(keeping: [1]).id == 3)
        #expect(checkpointFiles() == [Layout.checkpointName(1), Layout.checkpointName(3)])
        // Keep the current, which itself referenced 1: 1 goes now.
        try append(3)
        _ = try install(keeping: [3])
        #expect(checkpointFiles() == [Layout.checkpointName(3), Layout.checkpointName(4)])
        #expect(log.referencedCheckpoints.map(\.id) == [3])
        // Keep nothing: back to one file and a format 1 MANIFEST.
        try append(1)
        _ = try install(keeping: [])
        #expect(checkpointFiles() == [Layout.checkpointName(5)])
        #expect(fs.contents(of: storeDir + "/MANIFEST")?[8] == 1)
        // A roll keeps what the checkpoint references.
        try append(2)
        _ = try install(keeping: [5])
        for i in 0..<200 { _ = try log.append(jsonPayload(i, extra: 20), type: 1) }
        try log.close()
        log = try Log.open(directory: storeDir, fileSystem: fs, options: .test())
        #expect(log.referencedCheckpoints.map(\.id) == [5])
        #expect(log.recovery.removedStrayFiles.isEmpty)
        // Keeping the current file and one it references: both, ascending by id.
        _ = try install(keeping: [6, 5])
        #expect(log.referencedCheckpoints.map(\.id) == [5, 6])
        try log.close()
    }

    /// An unreferenced checkpoint file left by a crash is removed by open; a referenced one whose
    /// header is damaged is damage (verify and open say so), and salvage moves it aside while the
    /// current checkpoint stays.
    @Test func strayAndDamagedReferencedFiles() throws {
        let fs = SimulatedFileSystem(seed: 48)
        let payloads = try storeKeepingCheckpointOne(fs, records: 4, firstCheckpoint: 4)
        let stray = storeDir + "/" + Layout.checkpointName(0x7)
        let strayFile = try fs.open(stray, mode: .createTruncate)
        try strayFile.write(try #require(fs.contents(of: storeDir + "/" + Layout.checkpointName(1))), at: 0)
        try strayFile.close()
        let reopened = try Log.open(directory: storeDir, fileSystem: fs, options: .test())
        #expect(reopened.recovery.removedStrayFiles == [Layout.checkpointName(7)])
        try reopened.close()

        let referenced = storeDir + "/" + Layout.checkpointName(1)
        var bytes = try #require(fs.contents(of: referenced))
        bytes[20] ^= 0x40  // the header's id: its checksum fails
        fs.setContents(of: referenced, to: bytes)
        let report = try Log.verify(directory: storeDir, fileSystem: fs)
        #expect(report.damage?.file == Layout.checkpointName(1))
        #expect(throws: LogError.self) { _ = try Log.open(directory: storeDir, fileSystem: fs, options: .test()) }

        let salvaged = try Log.open(directory: storeDir, fileSystem: fs, options: .test(salvage: true))
        #expect(salvaged.checkpoint?.id == 2, "the current checkpoint stays")
        #expect(salvaged.referencedCheckpoints.isEmpty)
        #expect(fs.contents(of: referenced + ".broken") == bytes, "moved aside, not deleted")
        #expect(try salvaged.checkpoint?.readBody() == referencingBody(payloads, keeps: [1]))
        try salvaged.close()
    }

    /// A damaged MANIFEST: salvage rebuilds it from the newest intact checkpoint and keeps every
    /// older intact one as referenced (its body may read chunks from them).
    @Test func salvageRebuildKeepsOlderCheckpoints() throws {
        let fs = SimulatedFileSystem(seed: 49)
        let payloads = try storeKeepingCheckpointOne(fs, records: 6, firstCheckpoint: 3)
        var manifest = try #require(fs.contents(of: storeDir + "/MANIFEST"))
        manifest[17] ^= 1
        fs.setContents(of: storeDir + "/MANIFEST", to: manifest)
        let salvaged = try Log.open(directory: storeDir, fileSystem: fs, options: .test(salvage: true))
        #expect(salvaged.checkpoint?.id == 2)
        #expect(salvaged.referencedCheckpoints.map(\.id) == [1])
        #expect(salvaged.lastLSN == 6)
        #expect(try decodeBody(salvaged.referencedCheckpoints[0].readBody()) == Array(payloads.prefix(3)) + [[]])
        try salvaged.close()
    }

    /// A crash after every I/O call of a workload whose installs keep earlier files, in every
    /// power-cut mode: recovery finds the old or the new checkpoint, and every file the
    /// recovered checkpoint keeps is live, intact (body checksum) and referenced.
    @Test(arguments: SimulatedFileSystem.PowerCutMode.all.indices)
    func crashAtEveryCallOfAnInstallThatKeepsFiles(mode m: Int) throws {
        let mode = SimulatedFileSystem.PowerCutMode.all[m]
        let keepsPlan: [Set<UInt64>] = [[], [1], [1, 2], [2], [], [5]]
        func workload(_ log: Log, _ installed: inout [LSN: Set<UInt64>], _ tried: inout Set<LSN>) {
            var payloads: [[UInt8]] = []
            do {
                for keeps in keepsPlan {
                    for _ in 0..<3 {
                        let p = jsonPayload(payloads.count, extra: 4)
                        _ = try log.append(p, type: 1)
                        payloads.append(p)
                    }
                    let lsn = LSN(payloads.count)
                    tried.insert(lsn)
                    _ = try log.installCheckpoint(lsn: lsn) { w in
                        for id in keeps { w.keep(id) }
                        try w.write(referencingBody(payloads, keeps: keeps))
                    }
                    installed[lsn] = keeps
                }
            } catch {
                // The crash: stop, like a dead process.
            }
        }
        let total: Int = try {
            let fs = SimulatedFileSystem(seed: 470)
            let log = try Log.open(directory: storeDir, fileSystem: fs, options: .test())
            var installed: [LSN: Set<UInt64>] = [:]
            var tried: Set<LSN> = []
            workload(log, &installed, &tried)
            #expect(installed.count == keepsPlan.count, "the workload completes without faults")
            try log.close()
            return fs.callCount
        }()
        for n in 0...total {
            let fs = SimulatedFileSystem(seed: 470 &+ UInt64(n))
            fs.crash(afterCalls: n)
            var installed: [LSN: Set<UInt64>] = [:]
            var tried: Set<LSN> = [0]
            if let log = try? Log.open(directory: storeDir, fileSystem: fs, options: .test()) {
                workload(log, &installed, &tried)
                try? log.close()
            }
            fs.powerCut(mode: mode)
            guard fs.directoryExists(storeDir) else { continue }
            let ctx = "crash after call \(n) of \(total), \(mode)"
            let log: Log
            do { log = try Log.open(directory: storeDir, fileSystem: fs, options: .test()) } catch {
                Issue.record("reopen failed: \(error) — \(ctx)")
                continue
            }
            let c = log.checkpoint?.lsn ?? 0
            #expect(tried.contains(c), "a checkpoint that was never installed: \(ctx)")
            #expect(c >= (installed.keys.max() ?? 0), "an installed checkpoint was lost: \(ctx)")
            if let current = log.checkpoint {
                let body = try #require(decodeBody(try current.readBody()), "\(ctx)")
                let keeps = Set(try #require(body.last, "\(ctx)").map(UInt64.init))
                #expect(Set(log.referencedCheckpoints.map(\.id)) == keeps, "referenced files: \(ctx)")
                for r in log.referencedCheckpoints {
                    #expect(throws: Never.self, "a referenced file is intact: \(ctx)") { _ = try r.readBody() }
                }
            }
            let live = Set(
                [log.checkpoint].compactMap { $0?.fileName } + log.referencedCheckpoints.map(\.fileName))
            let onDisk = Set(fs.fileNames(in: storeDir).filter { $0.hasPrefix("ckpt-") })
            #expect(onDisk == live, "only live checkpoint files remain after open: \(ctx)")
            try log.close()
        }
    }

    /// The unlinks after the switch are best effort and not synced (FORMAT.md §8.3 step 4): an
    /// install syncs the directory once for its file's name and once for the MANIFEST's, and a
    /// power cut that undoes the unlinks brings back only files the next open removes.
    @Test func unlinksAfterTheSwitchAreNotSynced() throws {
        let fs = SimulatedFileSystem(seed: 93)
        let log = try Log.open(directory: storeDir, fileSystem: fs, options: .test())
        for i in 0..<40 { _ = try log.append(jsonPayload(i), type: 1) }
        _ = try log.installCheckpoint(lsn: 10) { try $0.write(Array("first".utf8)) }
        for i in 40..<60 { _ = try log.append(jsonPayload(i), type: 1) }
        let before = fs.directorySyncCount
        // Records follow the LSN, so no roll: the name, then the MANIFEST.
        _ = try log.installCheckpoint(lsn: 30) { try $0.write(Array("second".utf8)) }
        #expect(fs.directorySyncCount - before == 2, "the install synced the directory for its unlinks")
        let first = Layout.checkpointName(1)
        #expect(!fs.fileNames(in: storeDir).contains(first), "the replaced checkpoint was not unlinked")
        fs.powerCut(mode: .dropAllUnsynced)
        #expect(fs.fileNames(in: storeDir).contains(first), "the power cut kept an unsynced unlink")
        let reopened = try Log.open(directory: storeDir, fileSystem: fs, options: .test())
        #expect(try reopened.checkpoint?.readBody() == Array("second".utf8))
        #expect(!fs.fileNames(in: storeDir).contains(first), "open left a file no MANIFEST names")
        try reopened.close()
    }
}
