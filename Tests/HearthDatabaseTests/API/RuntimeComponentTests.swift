import Dispatch
import HearthTesting
import HearthModel
import Synchronization
import Testing
@testable import HearthDatabase

/// The hand-off gate's count and its sticky failure.
@Suite("Hand-off gate")
struct HandOffGateTests {
    @Test func countsQueuedHandOffsAndKeepsTheFirstFailure() {
        var gate = HandOffGate()
        #expect(gate.queued() == 1)
        #expect(gate.queued() == 2)
        gate.ran()
        #expect(gate.waiting == 1)
        gate.failed(.storage("first"))
        gate.failed(.storage("second"))
        #expect(gate.failure == .storage("first"), "the first failure stays")
        gate.ran()
        #expect(gate.waiting == 0)
    }
}

/// Writes-paused observers hear the value at registration, then each change.
@Suite("Writes-paused signal")
struct WritesPausedSignalTests {
    @Test func anObserverHearsTheCurrentValueThenEachChange() {
        let queue = DispatchQueue(label: "writes-paused-signal-tests")
        var signal = WritesPausedSignal()
        #expect(signal.add((queue, { _ in }), as: 1) == false)
        #expect(signal.set(true).count == 1)
        #expect(signal.add((queue, { _ in }), as: 2) == true, "a later observer hears the value now")
        #expect(signal.set(false).count == 2)
        signal.remove(1)
        #expect(signal.set(true).count == 1)
        #expect(signal.paused)
    }
}

/// Push ids drawn from one seed are the same sequence, and distinct.
@Suite("Push id source")
struct PushIDSourceTests {
    @Test func aSeedGivesOneSequenceOfDistinctIDs() {
        var a = PushIDSource(random: SeededRandom(seed: 7))
        var b = PushIDSource(random: SeededRandom(seed: 7))
        let fromA = (0..<5).map { _ in a.next(now: 1_700_000_000_000) }
        let fromB = (0..<5).map { _ in b.next(now: 1_700_000_000_000) }
        #expect(fromA == fromB)
        #expect(Set(fromA).count == 5)
    }
}

/// `.info` and its observers: a change tells exactly the observers whose location changed, each
/// with what it held before, and the observers then know the new value.
@Suite("Info board")
struct InfoBoardTests {
    @Test func aChangeTellsTheObserversOfWhatChangedOnce() throws {
        var o = Database.Options()
        o.storeDirectory = "/db"
        o.fileSystem = SimulatedFileSystem(seed: 1)
        o.connectAtOpen = false
        o.callbackQueue = DispatchQueue(label: "info-board-tests")
        let db = try Database(url: "ws://127.0.0.1:9000?ns=info", options: o)
        defer { try? db.close() }
        let root = db.reference(withPath: ".info")
        func observer(_ key: String) -> InfoObserver {
            InfoObserver(
                ref: root.child(key), path: Path(keys: [ChildKey(key)]), kind: .value, queue: DispatchQueue.main,
                handler: { _, _ in }, last: key == "connected" ? .bool(false) : .number(0))
        }
        var board = InfoBoard()
        _ = board.add(observer("connected"), as: 1)
        _ = board.add(observer("serverTimeOffset"), as: 2)
        let fired = board.update { $0.connected = true }
        #expect(fired.map { $0.1 } == [.bool(true)], "only the changed location")
        #expect(fired.first?.0.last == .bool(false), "told with what it held before")
        #expect(board.update { $0.connected = true }.isEmpty, "no change, no event")
        #expect(board.handles(at: Path(keys: [Database.infoKey, "connected"])) == [1])
        board.remove(1)
        #expect(board.update { $0.connected = false }.isEmpty)
        #expect(board.info.connected == false)
    }
}
