import Foundation
import Hearth
@_spi(HearthInternals) @testable import HearthServer
@_spi(HearthInternals) import HearthWire
@_spi(HearthInternals) import HearthWireTesting
import Synchronization
import Testing

@Suite("The commit queue is bounded: a message without room waits its turn, unread, and is never dropped", .serialized)
struct CommitQueueTests {
    @Test("the budget takes what fits, lines up the rest first come first served, and lets them in as room frees")
    func budgetLine() {
        var budget = CommitBudget(limit: 1_000)
        let (a, b, c) = (ConnectionID(1), ConnectionID(2), ConnectionID(3))
        let first = budget.take(600)
        let waits = [budget.takeOrWait(600, for: a), budget.takeOrWait(300, for: b), budget.takeOrWait(100, for: c)]
        #expect(
            first && waits == [false, false, false],
            "room for 300, but the first in line waits for 600: no one passes it")
        #expect(budget.bytes == 600)
        #expect(budget.line.map(\.id) == [a, b, c])
        let admitted = budget.release(600)
        #expect(admitted == [a, b, c], "600 released: 1 (600) and 2 (300) fit, then 3 (100)")
        #expect(budget.bytes == 1_000 && budget.line.isEmpty)
        // A message larger than the bound goes alone into an empty queue.
        let none = budget.release(1_000)
        let oversize = budget.take(5_000)
        let behind = budget.takeOrWait(1, for: ConnectionID(4))
        #expect(none.isEmpty && oversize && !behind)
        let left = [budget.leave(ConnectionID(4)), budget.leave(ConnectionID(4))]
        #expect(left == [true, false])
        let last = budget.release(5_000)
        #expect(last.isEmpty && budget.bytes == 0)
    }

    @Test(
        "writes from three connections while the commit is stuck: the queue stays within its bound, every write is answered in order"
    )
    func fullQueueParksConnections() async throws {
        let limit = 4_096
        let rig = try await RuntimeRig { $0.maxCommitQueueBytes = limit }
        let sinks = (1...3).map { rig.connect(UInt64($0)) }
        let value = JSONValue.string(String(repeating: "v", count: 500))
        let writes = 20
        var peak = 0
        // Holding the store stops the commit thread at its next commit: nothing is released, so
        // whatever the thread's timing, every message taken stays counted.
        rig.runtime.store.withLock { _ in
            for i in 1...writes {
                for n in 1...3 {
                    rig.send(UInt64(n), i, .put(path: try! Path(validating: "c\(n)/k\(i)"), data: value, hash: nil))
                    peak = max(peak, rig.runtime.commitQueueBytes)
                }
            }
        }
        #expect(peak <= limit, "the commit queue held \(peak) bytes, over its bound of \(limit)")
        for sink in sinks {
            #expect(sink.reading.withLock { $0.first } == false, "a connection without room is no longer read")
        }
        for (n, sink) in sinks.enumerated() {
            for i in 1...writes { #expect(sink.response(i)?.status == "ok", "connection \(n + 1) write \(i)") }
            let numbers = sink.messages.compactMap { m -> Int? in
                if case .response(let number, _, _) = m { number } else { nil }
            }
            #expect(numbers == Array(1...writes), "answered in the order sent")
            #expect(waitFor { sink.reading.withLock { $0.last } == true }, "read again once its messages are in")
        }
        let data = rig.runtime.state.withLock { $0.core.data }
        for n in 1...3 {
            #expect(data.child(at: try! Path(validating: "c\(n)")).childCount == writes, "nothing dropped")
        }
        #expect(waitFor { rig.runtime.commitQueueBytes == 0 }, "its room given back after the answer went out")
        #expect(rig.runtime.state.withLock { $0.parked.isEmpty && $0.budget.line.isEmpty })
        rig.runtime.stop()
    }

    @Test("a REST request that finds the commit queue full is answered 503 and changes nothing")
    func restRefusedWhenFull() async throws {
        let rig = try await RuntimeRig { $0.maxCommitQueueBytes = 1_024 }
        _ = rig.connect(1)
        let answers = Mutex<[Int]>([])
        let answered = DispatchSemaphore(value: 0)
        rig.runtime.store.withLock { _ in
            rig.send(1, 1, .put(path: "w", data: .string(String(repeating: "v", count: 900)), hash: nil))
            let request = RESTRequest(method: .put, path: "r", body: "1", principal: .admin)
            rig.runtime.rest(request) { response in
                answers.withLock { $0.append(response.status) }
                answered.signal()
            }
            #expect(answered.wait(timeout: .now() + 30) == .success, "answered at once, not after the commit")
        }
        #expect(answers.withLock { $0 } == [503])
        rig.runtime.stop()
        #expect(rig.runtime.state.withLock { $0.core.data.child(at: "r").isEmpty })
    }

    @Test("a connection that closes while it waits gives its place back: the one behind it goes on")
    func closedWaiterLeavesLine() async throws {
        let rig = try await RuntimeRig { $0.maxCommitQueueBytes = 1_024 }
        _ = rig.connect(1)
        let waiter = rig.connect(2)
        let next = rig.connect(3)
        let big = JSONValue.string(String(repeating: "v", count: 600))
        rig.runtime.store.withLock { _ in
            rig.send(1, 1, .put(path: "a", data: big, hash: nil))
            rig.send(2, 1, .put(path: "b", data: big, hash: nil))
            rig.send(3, 1, .put(path: "c", data: 1, hash: nil))
            #expect(rig.runtime.state.withLock { $0.budget.line.map(\.id) } == [ConnectionID(2), ConnectionID(3)])
            rig.runtime.closed(ConnectionID(2))
            #expect(rig.runtime.state.withLock { $0.budget.line.map(\.id) } == [ConnectionID(3)])
        }
        #expect(next.response(1)?.status == "ok")
        #expect(waiter.messages.allSatisfy { if case .response = $0 { false } else { true } })
        #expect(waitFor { rig.runtime.commitQueueBytes == 0 }, "its room given back after the answer went out")
        rig.runtime.stop()
    }

    @Test(
        "over real sockets with a one-byte bound: each message waits, unread, for the one before it; all are answered")
    func realSocketsSmallestBound() async throws {
        // One byte: every message goes alone into an empty queue, so the connection stops being
        // read after each one until its commit is released, however the threads interleave.
        let live = try await LiveServer(configure: { $0.maxCommitQueueBytes = 1 })
        let a = try live.client()
        _ = a.receive()
        let writes = 100
        for i in 1...writes {
            let put = ClientRequest.put(path: try Path(validating: "n/k\(i)"), data: .string("v\(i)"), hash: nil)
            try a.send(put.message(number: i))
        }
        for i in 1...writes { #expect(a.response(i).status == "ok", "write \(i)") }
        #expect(live.runtime.state.withLock { $0.core.data.child(at: "n").childCount } == writes)
        #expect(waitFor { live.runtime.commitQueueBytes == 0 }, "its room given back after the answer went out")
        try await live.stop()
    }

    /// Waits (a hang guard, not a verdict) until `condition` holds.
    func waitFor(timeout: Double = 30, _ condition: () -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while !condition() && Date() < deadline { usleep(1_000) }
        return condition()
    }
}
