import Foundation
import Hearth
import HearthModel
@_spi(HearthInternals) import HearthWire
import Testing
@testable import HearthDatabase

/// The client core's side of exactly-once writes (the article "Exactly-once writes"): stamps only
/// for a server that offers them, each write with the writer id it was created under, a fresh
/// writer id per incarnation of a store, transactions given up at a drop, and a recognised
/// re-send that does not overwrite a listen's newer data.
@Suite struct ExactlyOnceClientTests {
    static let write1 = PendingWrite(id: 1, path: "k/a", operation: .set(Node(.number(1))))

    /// A core driven by hand: connects, gets a hello with `extensions`, returns what it sent.
    struct Driver {
        var core: ClientCore
        var now: Int64 = 1_000
        var link: ConnectionID?

        init(writes: [PendingWrite] = [], writers: WriterIdentities = WriterIdentities()) {
            core = ClientCore(pendingWrites: writes, writers: writers, token: nil, seed: 1, hash: { _ in "" })
        }

        /// A core restored from a store whose pending writes were saved, one each, under
        /// `writers` (`nil`: with no writer id), as after a restart.
        init(restoring writers: [String?]) throws {
            let dir = TempDir()
            let store = try Store.open(directory: dir.path)
            for (i, writer) in writers.enumerated() {
                try store.commit { (b: inout StoreBatch) throws(StoreError) in
                    let op = PendingWrite.Operation.set(Node(.number(Double(i))))
                    let path = Path(keys: ["k", ChildKey("w\(i)")])
                    if let writer {
                        try b.saveWrite(op, at: path, writer: writer)
                    } else {
                        try b.saveWrite(op, at: path)
                    }
                }
            }
            self.init(writes: store.pendingWrites(), writers: store.writerIdentities())
            try store.close()
        }

        /// Connects (a fresh attempt) and delivers the hello; returns the requests sent.
        mutating func connect(extensions: [String]) -> (requests: [(Int, ClientRequest)], out: ClientOutput) {
            var out = link == nil ? core.goOnline(now: now) : ClientOutput()
            if link != nil {
                out = core.connectionClosed(link!, now: now)
                now += 60_000
                let ticked = core.tick(now: now)
                if ticked.open != nil { out = ticked }
            }
            guard let open = out.open else { return ([], out) }
            link = open
            _ = core.connectionOpened(open, now: now)
            let hello = ServerMessage.hello(timestamp: now, host: "h", sessionID: "s", extensions: extensions).text
            let sent = core.received(hello, on: open, now: now)
            return (Driver.requests(sent), sent)
        }

        static func requests(_ out: ClientOutput) -> [(Int, ClientRequest)] {
            out.messages.compactMap { m in
                if case let .request(n, r)? = try? ClientMessage.decode(m) { return (n, r) }
                return nil
            }
        }

        mutating func answer(_ number: Int, _ data: JSONValue? = nil) -> ClientOutput {
            core.received(ServerMessage.response(number: number, status: "ok", data: data).text, on: link!, now: now)
        }
    }

    static func stamp(of request: ClientRequest) -> WriteStamp? {
        switch request {
        case let .put(_, _, _, stamp), let .merge(_, _, stamp): stamp
        default: nil
        }
    }

    @Test func stampsOnlyWhenTheServerOffersThem() throws {
        var d = try Driver(restoring: ["me"])
        let plain = d.connect(extensions: [])
        #expect(
            plain.requests.count == 1 && Self.stamp(of: plain.requests[0].1) == nil, "plain v5 to a server without x")
        #expect(!d.core.stampsWrites)
        let stamped = d.connect(extensions: ["w", "future"])
        #expect(stamped.requests.map { Self.stamp(of: $0.1) } == [WriteStamp(writer: "me", id: 1)])
        #expect(stamped.out.messages.last?.contains(#""w":"me","i":1"#) == true)
        // A write made while connected goes out stamped too, in id order, with its writer id.
        let next = d.core.write(
            PendingWrite(id: 4, path: "k/b", operation: .update([ChildUpdate(path: "c", node: Node(.bool(true)))])),
            writer: "now", now: d.now)
        #expect(Driver.requests(next).map { Self.stamp(of: $0.1) } == [WriteStamp(writer: "now", id: 4)])

        // No writer id: never stamped, whatever the server offers.
        var anonymous = Driver(writes: [Self.write1])
        #expect(anonymous.connect(extensions: ["w"]).requests.map { Self.stamp(of: $0.1) } == [nil])
        let unstamped = anonymous.core.write(
            PendingWrite(id: 2, path: "k/c", operation: .set(Node(.number(2)))), now: anonymous.now)
        #expect(Driver.requests(unstamped).map { Self.stamp(of: $0.1) } == [nil])
    }

    /// Pending writes of several incarnations go out, on every connection, in id order, each
    /// with the writer id it was created under — so each writer's ids increase on the
    /// connection, as the server requires — and a write saved before the store had a writer
    /// id goes out unstamped.
    @Test func eachWriteCarriesTheWriterItWasCreatedUnder() throws {
        var d = try Driver(restoring: [nil, "A", "A", "B", "A", "C"])
        let expected: [WriteStamp?] = [
            nil, WriteStamp(writer: "A", id: 2), WriteStamp(writer: "A", id: 3), WriteStamp(writer: "B", id: 4),
            WriteStamp(writer: "A", id: 5), WriteStamp(writer: "C", id: 6),
        ]
        var writes: [(Int, ClientRequest)] = []
        for round in 0..<2 {
            writes = d.connect(extensions: ["w"]).requests.filter { if case .put = $0.1 { true } else { false } }
            let stamps = writes.map { Self.stamp(of: $0.1) }
            #expect(stamps == expected, "connection \(round + 1)")
            for writer in ["A", "B", "C"] {
                let ids = stamps.compactMap { $0?.writer == writer ? $0!.id : nil }
                #expect(ids == ids.sorted() && Set(ids).count == ids.count, "\(writer)'s ids increase")
            }
        }
        // The answers remove the writes and their writer ids.
        #expect(d.core.writerIDs.count == 5)
        for (number, _) in writes { _ = d.answer(number) }
        #expect(d.core.unansweredWriteIDs.isEmpty && d.core.writerIDs.isEmpty)
    }

    /// A compare-and-set in flight when its connection drops is given up (`disconnect`, as
    /// Firebase does), stamped or not: the server's mark is a high-water mark, so a stamped
    /// compare-and-set it refused (`datastale`, the answer lost) followed by a later write it
    /// applied would be answered `ok` on a re-send — a transaction reported committed that never
    /// landed (the simulator's seed 61 once transactions and exactly-once writes met).
    @Test func aStampedTransactionInFlightAtADropIsInterrupted() {
        var d = Driver()
        _ = d.connect(extensions: ["w"])
        let cas = ClientCore.WriteCondition(hash: "h1", transactionID: nil)
        let sent = d.core.write(Self.write1, writer: "me", condition: cas, now: d.now)
        #expect(Driver.requests(sent).count == 1)
        let closed = d.core.connectionClosed(d.link!, now: d.now)
        #expect(closed.events.contains(.conditionalWriteInterrupted(id: 1)))
        d.now += 60_000
        let retry = d.core.tick(now: d.now)
        d.link = retry.open
        _ = d.core.connectionOpened(d.link!, now: d.now)
        let hello = d.core.received(
            ServerMessage.hello(timestamp: d.now, host: "h", sessionID: "s", extensions: ["w"]).text, on: d.link!,
            now: d.now)
        #expect(Driver.requests(hello).allSatisfy { if case .put = $0.1 { false } else { true } }, "not sent again")
    }

    @Test func aSeenAckIsASuccess() throws {
        // A recognised re-send is acknowledged as any ok: the server follows it with the current
        // data of the listens it overlaps, which replaces the write's value in the cache.
        var d = try Driver(restoring: ["me"])
        _ = d.core.listen(QueryLocation(path: "k", query: .default), now: d.now)
        let sent = d.connect(extensions: ["w"]).requests
        let write = sent.first { Self.stamp(of: $0.1) != nil }!
        let out = d.answer(write.0, WriteStamp.seenResponse)
        #expect(out.commits == [.ackWrite(1)])
        #expect(out.events == [.writeCompleted(id: 1, error: nil)])
        #expect(d.core.unansweredWriteIDs.isEmpty)
    }
}
