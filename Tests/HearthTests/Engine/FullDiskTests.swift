import Foundation
import Testing
@_spi(HearthInternals) @testable import Hearth
import HearthTesting

/// A full disk must not brick the store: a checkpoint that cannot be
/// written changes nothing durable, so open — which checkpoints a long log tail — still
/// succeeds, reads work, writes go on while the log itself has room, and a later checkpoint
/// succeeds once there is space.
@Suite struct FullDiskTests {
    @Test(arguments: [FileOperation.create, .write, .sync, .rename])
    func openReadsAndWritesWhileNoCheckpointFits(op: FileOperation) throws {
        let fs = SimulatedFileSystem(seed: 11)
        var o = options(fs)
        o.checkpointMinimumBytes = 4096
        do {
            let store = try Store.open(directory: "/db", options: o)
            for i in 0..<200 {
                try store.applyServerOverwrite(
                    .string(String(repeating: "x", count: 40)), at: Path(keys: ["d", ChildKey("k\(1000 + i)")]))
            }
            try store.close()
        }
        // Every checkpoint file now fails with ENOSPC at `op`.
        fs.injectFault(op, .noSpace, sticky: true, pathContains: "ckpt-")
        let store = try Store.open(directory: "/db", options: o)  // runs maintenance inline: the checkpoint fails
        #expect(try store.value(at: "d/k1000") == .string(String(repeating: "x", count: 40)))
        #expect(try store.stats().pendingWrites == 0)
        try store.applyServerOverwrite(.number(1), at: "after")  // the log is not poisoned
        #expect(throws: StoreError.self) { _ = try store.compact() }
        #expect(
            try fs.listDirectory("/db").allSatisfy { !$0.hasSuffix(".tmp") }, "a failed checkpoint left its temp file")
        try store.applyServerOverwrite(.number(2), at: "after")
        // Room again: the next checkpoint succeeds.
        fs.clearFaults()
        _ = try store.compact()
        try store.close()
        let again = try Store.open(directory: "/db", options: o)
        #expect(try again.value(at: "after") == .number(2))
        #expect(try again.value(at: "d/k1199") == .string(String(repeating: "x", count: 40)))
        try again.close()
    }
}

/// Opening a store twice in one process says so, instead of blaming
/// "another process".
@Suite struct DoubleOpenTests {
    @Test func aSecondOpenInThisProcessIsReportedAsSuch() throws {
        let dir = TempDir()
        let first = try Store.open(directory: dir.path, options: options())
        do {
            _ = try Store.open(directory: dir.path, options: options())
            Issue.record("a second open succeeded")
        } catch {
            guard case .log(.storeAlreadyOpen(let path)) = error else {
                Issue.record("wrong error: \(error)")
                return
            }
            #expect(path.hasSuffix("LOCK"))
            #expect(error.description.contains("already open in this process"))
        }
        try first.close()
        let again = try Store.open(directory: dir.path, options: options())  // released on close
        try again.close()
    }
}

/// ENOSPC at every write and every sync that open (and the checkpoint it runs) makes, one
/// position at a time: open either succeeds and reads everything, or fails
/// with a typed error and a read-only open reads everything; once there is room, a normal open
/// has every acknowledged write.
@Suite struct FullDiskAtEveryCallTests {
    static func seeded() throws -> (SimulatedFileSystem, Store.Options) {
        let fs = SimulatedFileSystem(seed: 21)
        var o = options(fs)
        o.checkpointMinimumBytes = 4096
        let store = try Store.open(directory: "/db", options: o)
        for i in 0..<150 {
            try store.applyServerOverwrite(
                .string(String(repeating: "y", count: 60)), at: Path(keys: ["d", ChildKey("k\(1000 + i)")]))
        }
        try store.saveWrite(.set(.string("mine")), at: "outbox/w")
        try store.close()
        return (fs, o)
    }

    static func expectEverything(_ store: Store) throws {
        #expect(try store.value(at: "d/k1000") == .string(String(repeating: "y", count: 60)))
        #expect(try store.value(at: "d/k1149") == .string(String(repeating: "y", count: 60)))
        #expect(try store.value(at: "outbox/w") == .string("mine"))
    }

    @Test(arguments: [FileOperation.write, .sync])
    func everyPosition(op: FileOperation) throws {
        // How many calls of any kind open makes here (with its checkpoint): positions past it
        // would test nothing, so the loop covers them all.
        let (probe, po) = try Self.seeded()
        let before = probe.callCount
        try Store.open(directory: "/db", options: po).close()
        let calls = probe.callCount - before
        #expect(calls < 40, "open made \(calls) calls; raise the loop bound")
        var opened = 0, refused = 0
        for k in 0..<40 {
            let (fs, o) = try Self.seeded()
            fs.injectFault(op, .noSpace, sticky: true, skip: k)
            do {
                let store = try Store.open(directory: "/db", options: o)
                opened += 1
                try Self.expectEverything(store)
                try? store.close()
            } catch {
                refused += 1
                var ro = o
                ro.readOnly = true
                let reader = try Store.open(directory: "/db", options: ro)
                try Self.expectEverything(reader)
                try reader.close()
            }
            fs.clearFaults()
            let again = try Store.open(directory: "/db", options: o)
            try Self.expectEverything(again)
            try again.applyServerOverwrite(.number(1), at: "after")
            try again.close()
        }
        print(
            "ENOSPC from the \(op) call k on, k = 0..<40: open succeeded \(opened) times, refused \(refused) (then read-only reads everything)"
        )
    }
}
