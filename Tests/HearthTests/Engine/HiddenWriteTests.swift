import Foundation
import Testing
@_spi(HearthInternals) @testable import Hearth

/// A hidden write (``StoreBatch/saveHiddenWrite(_:at:writer:)``): pending, but raising no
/// events and showing in no local read until it leaves — Firebase's transaction with
/// `applyLocally` false.
@Suite struct HiddenWriteTests {
    let path: Path = "counter"

    @Test func aHiddenWriteRaisesNothingUntilTheServersData() throws {
        let dir = TempDir()
        let store = try Store.open(directory: dir.path, options: options())
        try store.commit { (b: inout StoreBatch) throws(StoreError) in
            try b.applyServerOverwrite(Node(.integer(exactly: 10)), at: path)
            try b.trackQuery(at: QueryLocation(path: path, query: .default), complete: true)
        }
        let log = EventLog()
        let token = try store.addListener(at: path, query: .default, kinds: .value) { log.record($0) }
        store.waitForEventDelivery()
        #expect(summary(log.take()) == ["value 10"])

        var id: Int64 = 0
        try store.commit { (b: inout StoreBatch) throws(StoreError) in
            id = try b.saveHiddenWrite(Node(.integer(exactly: 11)), at: path, writer: "w1")
        }
        store.waitForEventDelivery()
        #expect(log.take().isEmpty, "a hidden write raises no event")
        #expect(try store.value(at: path) == Node(.integer(exactly: 10)), "nor shows in local reads")
        #expect(store.pendingWrites().map(\.id) == [id], "but it is pending")

        // The server's data (the committed value) raises the event; the ack raises nothing more.
        try store.commit { (b: inout StoreBatch) throws(StoreError) in
            try b.applyServerOverwrite(Node(.integer(exactly: 11)), at: path)
            try b.ackWrite(id)
        }
        store.waitForEventDelivery()
        #expect(summary(log.take()) == ["value 11"])
        #expect(store.pendingWrites().isEmpty)

        // A visible write in the same place shows at once, as before.
        try store.commit { (b: inout StoreBatch) throws(StoreError) in
            _ = try b.saveWrite(.set(Node(.integer(exactly: 12))), at: path, writer: "w1")
        }
        store.waitForEventDelivery()
        #expect(summary(log.take()) == ["value 12"])
        try store.removeListener(token)
        try store.close()
    }

    /// A reverted hidden write raises nothing: nothing was shown.
    @Test func aRevertedHiddenWriteRaisesNothing() throws {
        let dir = TempDir()
        let store = try Store.open(directory: dir.path, options: options())
        try store.commit { (b: inout StoreBatch) throws(StoreError) in
            try b.applyServerOverwrite(Node(.integer(exactly: 1)), at: path)
            try b.trackQuery(at: QueryLocation(path: path, query: .default), complete: true)
        }
        let log = EventLog()
        let token = try store.addListener(at: path, query: .default, kinds: .value) { log.record($0) }
        store.waitForEventDelivery()
        #expect(summary(log.take()) == ["value 1"])
        var id: Int64 = 0
        try store.commit { (b: inout StoreBatch) throws(StoreError) in
            id = try b.saveHiddenWrite(Node(.integer(exactly: 2)), at: path, writer: "w1")
        }
        try store.commit { (b: inout StoreBatch) throws(StoreError) in try b.revertWrite(id) }
        store.waitForEventDelivery()
        #expect(log.take().isEmpty)
        #expect(try store.value(at: path) == Node(.integer(exactly: 1)))
        try store.removeListener(token)
        try store.close()
    }
}
