import Dispatch
import Foundation
@testable import HearthServer
import Synchronization
import Testing

/// A sink that records the thread each text was sent on.
final class ThreadRecordingSink: ConnectionSink {
    let sent = Mutex<[(text: String, thread: ObjectIdentifier)]>([])

    func send(_ text: String) { sent.withLock { $0.append((text, ObjectIdentifier(Thread.current))) } }
    func close() {}
    func setReading(_ reading: Bool) {}
}

@Suite("Delivery: short known texts go out on the caller's thread; everything keeps its order")
struct DeliveryTests {
    @Test("a short known text reaches the sink before send returns, on the caller's thread")
    func shortTextInline() {
        let sink = ThreadRecordingSink()
        let total = SharedCount()
        let delivery = Delivery(sink: sink, total: total)
        delivery.send(.text(#"{"t":"d","d":{"r":1,"b":{"s":"ok","d":""}}}"#))
        let sent = sink.sent.withLock { $0 }
        #expect(sent.map(\.text) == [#"{"t":"d","d":{"r":1,"b":{"s":"ok","d":""}}}"#])
        #expect(sent.first?.thread == ObjectIdentifier(Thread.current))
        #expect(delivery.waiting.load(ordering: .relaxed) == 0 && total.value.load(ordering: .relaxed) == 0)
    }

    @Test("a long known text, and any message to render, is queued: the caller's thread never sends it")
    func longTextQueued() {
        let sink = ThreadRecordingSink()
        let delivery = Delivery(sink: sink, total: SharedCount())
        let long = String(repeating: "x", count: Delivery.inlineLimit + 1)
        delivery.send(.text(long))
        delivery.send(OutboundMessage(weight: 1) { "rendered" })
        delivery.drain()
        let sent = sink.sent.withLock { $0 }
        #expect(sent.map(\.text) == [long, "rendered"])
        #expect(sent.allSatisfy { $0.thread != ObjectIdentifier(Thread.current) })
    }

    @Test("a short known text waits behind a message still being rendered or sent")
    func orderKeptBehindQueued() {
        let sink = RecordingSink()
        let gate = DispatchSemaphore(value: 0)
        sink.gate.withLock { $0 = gate }
        let delivery = Delivery(sink: sink, total: SharedCount())
        delivery.send(OutboundMessage(weight: 1) { "push" })
        // Sent inline, this would block here on the gate, and come first.
        delivery.send(.text("ok"))
        delivery.send(.text("ok 2"))
        sink.gate.withLock { $0 = nil }
        gate.signal()
        delivery.drain()
        #expect(sink.texts.withLock { $0 } == ["push", "ok", "ok 2"])
    }
}
