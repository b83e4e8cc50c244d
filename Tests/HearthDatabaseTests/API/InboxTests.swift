import Dispatch
import Foundation
import HearthModel
@_spi(HearthInternals) import HearthWire
import Synchronization
import Testing

@testable import HearthDatabase

/// A transport whose one connection has messages waiting in its "socket": it delivers them one
/// at a time while reading is on and stops the moment it is told to (no read under way).
final class BufferedTransport: Transport, TransportConnection {
    struct State {
        var events: (@Sendable (TransportEvent) -> Void)?
        var waiting: [String] = []
        var reading = true
        var readingLog: [Bool] = []
        var sent: [String] = []
    }
    let state = Mutex(State())
    /// Called after each delivery (the test reads the inbox's count there).
    let probe = Mutex<(@Sendable () -> Void)?>(nil)

    func connect(
        to endpoint: ServerEndpoint, lastSessionID: String?, events: @escaping @Sendable (TransportEvent) -> Void
    ) -> any TransportConnection {
        state.withLock { $0.events = events }
        return self
    }

    func send(_ message: String) { state.withLock { $0.sent.append(message) } }
    func close() {}

    func setReading(_ reading: Bool) {
        state.withLock { s in
            s.reading = reading
            s.readingLog.append(reading)
        }
        if reading { pump() }
    }

    /// Delivers one event at once (the connection opening, a hello).
    func deliver(_ event: TransportEvent) { state.withLock { $0.events }?(event) }

    /// Delivers the waiting messages in order while reading is on.
    func pump() {
        while true {
            let next = state.withLock { s -> (String, @Sendable (TransportEvent) -> Void)? in
                guard s.reading, !s.waiting.isEmpty, let events = s.events else { return nil }
                return (s.waiting.removeFirst(), events)
            }
            guard let (text, events) = next else { return }
            events(.message(text))
            probe.withLock { $0 }?()
        }
    }
}

/// A transport whose `setReading(false)`, the stop a delivery decides, lets the database's
/// queue go and reaches the connection only after the resume the drain then decides: the two
/// calls cross on their way, as a stop and a resume made on two threads can.
final class CrossingTransport: Transport, TransportConnection {
    struct State {
        var events: (@Sendable (TransportEvent) -> Void)?
        var readingLog: [Bool] = []
    }
    let state = Mutex(State())
    /// Held by the test on the database's queue until the stop is under way.
    let gate = DispatchSemaphore(value: 0)
    let resumed = DispatchSemaphore(value: 0)

    func connect(
        to endpoint: ServerEndpoint, lastSessionID: String?, events: @escaping @Sendable (TransportEvent) -> Void
    ) -> any TransportConnection {
        state.withLock { $0.events = events }
        return self
    }

    func send(_ message: String) {}
    func close() {}

    func setReading(_ reading: Bool) {
        if reading {
            state.withLock { $0.readingLog.append(true) }
            resumed.signal()
            return
        }
        gate.signal()
        _ = resumed.wait(timeout: .now() + 60)  // a hang guard: the drain resumes at once
        state.withLock { $0.readingLog.append(false) }
    }

    func deliver(_ event: TransportEvent) { state.withLock { $0.events }?(event) }
}

@Suite("The client's inbox is bounded: past it the connection stops being read, and nothing is dropped", .serialized)
struct InboxTests {
    @Test("the inbox stops the connection once, when it reaches its bound, and lets it read again after a drain")
    func inboxStopsAndResumes() {
        var inbox = Inbox(limit: 1_000)
        let link = ConnectionID(1)
        var stops: [Int] = []
        for i in 1...10 {
            if inbox.append(.message(String(repeating: "x", count: 136)), from: link) != nil { stops.append(i) }
        }
        #expect(stops == [5], "stopped once, by the report that reached the bound (5 × 200 bytes)")
        let batch = inbox.take()
        #expect(batch.events.count == 10)
        let again = inbox.append(.message("late"), from: link)
        #expect(again == nil, "a connection already stopped is not stopped again")
        let resumed = inbox.handled(batch.bytes)
        #expect(resumed == link, "under the bound again: read again")
        #expect(inbox.bytes == Inbox.weight(of: .message("late")))
        let rest = inbox.take()
        let none = inbox.handled(rest.bytes)
        #expect(none == nil)
        #expect(inbox.bytes == 0)
    }

    /// A database on `transport` with a 1,024-byte inbox, connected (its first use) and past
    /// the server's hello, delivered through `deliver`.
    static func connected(
        _ transport: any Transport, deliver: (TransportEvent) -> Void
    ) throws -> (Database, Database.Options) {
        var options = Database.Options()
        options.transport = transport
        options.maxInboxBytes = 1_024
        let db = try Database(url: "ws://127.0.0.1:9?ns=inbox", options: options)
        db.goOnline()  // connects now (the first use), so that the transport has its handler
        deliver(.opened)
        deliver(.message(ServerMessage.hello(timestamp: 0, host: "h", sessionID: "s").text))
        return (db, options)
    }

    @Test("acks arriving while the sync queue is busy: the connection stops at the bound, every write completes")
    func busyDatabaseStopsReading() throws {
        let transport = BufferedTransport()
        let (db, options) = try Self.connected(transport) { transport.deliver($0) }
        defer { try? db.close() }
        let writes = 50
        let completed = Mutex<[DatabaseError?]>([])
        let done = DispatchSemaphore(value: 0)
        for i in 0..<writes {
            try db.reference(withPath: "w/\(i)").setValue(.int(Int64(i))) { error, _ in
                completed.withLock { $0.append(error) }
                done.signal()
            }
        }
        db.work.sync {}  // the writes are handed to the core, which sends them, on the sync queue
        let numbers = transport.state.withLock { $0.sent }.compactMap { text -> Int? in
            if case .request(let number, .put)? = try? ClientMessage.decode(text) { number } else { nil }
        }
        #expect(numbers.count == writes)
        let acks = numbers.map { ServerMessage.response(number: $0, status: "ok", data: nil).text }
        transport.state.withLock { $0.waiting = acks }
        let heaviest = acks.map { Inbox.weight(of: .message($0)) }.max() ?? 0
        let peak = Mutex(0)
        transport.probe.withLock { $0 = { peak.withLock { $0 = max($0, db.inbox.withLock { $0.bytes }) } } }
        // The sync queue is held: nothing is drained while the acks arrive.
        let gate = DispatchSemaphore(value: 0)
        db.work.async { gate.wait() }
        transport.pump()
        let (log, left) = transport.state.withLock { ($0.readingLog, $0.waiting.count) }
        #expect(log == [false], "told to stop reading once")
        #expect(left > 0, "the rest stays in the socket")
        #expect(peak.withLock { $0 } <= options.maxInboxBytes - 1 + heaviest, "within the bound and one message")
        gate.signal()
        for _ in 0..<writes { #expect(done.wait(timeout: .now() + 30) == .success) }
        #expect(completed.withLock { $0.count } == writes)
        #expect(completed.withLock { $0.allSatisfy { $0 == nil } }, "every write acknowledged")
        // The drain that handles the last acks reads the connection again after the
        // completions are queued: waited for (a hang guard), not raced.
        let deadline = Date().addingTimeInterval(30)
        while transport.state.withLock({ $0.readingLog.last }) != true && Date() < deadline { usleep(1_000) }
        #expect(transport.state.withLock { $0.readingLog.last } == true, "reading again")
        #expect(transport.state.withLock { $0.waiting.isEmpty })
    }

    @Test("a stop that reaches the connection after the resume decided later is followed by another resume")
    func crossingStopAndResume() throws {
        let transport = CrossingTransport()
        let (db, _) = try Self.connected(transport) { transport.deliver($0) }
        defer { try? db.close() }
        db.work.sync {}
        // The queue is held: the first message's drain waits behind the gate, so the second
        // message, which brings the inbox to its bound, stops the connection with both waiting.
        let gate = transport.gate
        db.work.async { gate.wait() }
        let push = { (n: Int, size: Int) in
            ServerMessage.set(
                path: Path(keys: [ChildKey("p\(n)")]), data: .string(String(repeating: "x", count: size)), tag: nil
            ).text
        }
        transport.deliver(.message(push(1, 10)))
        // Stops the connection: the stop lets the drain run, and lands after its resume.
        transport.deliver(.message(push(2, 2_000)))
        db.work.sync {}
        let log = transport.state.withLock { $0.readingLog }
        #expect(
            log.first == true && log.dropFirst().first == false, "the resume was made before the stop landed: \(log)")
        #expect(log.last == true, "left unread with an empty inbox: \(log)")
        #expect(db.inbox.withLock { $0.bytes } == 0)
    }
}
