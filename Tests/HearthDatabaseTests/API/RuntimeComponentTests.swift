import Dispatch
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
