import Hearth
@_spi(HearthInternals) @testable import HearthServer
@_spi(HearthInternals) import HearthWire
import Testing

/// What a refused connection hears before the close. Firebase's clients never reconnect after a
/// shutdown (`s`), so only a refusal that retrying cannot cure sends it; a limit that lifts sends
/// its reason as a server error (`e`), which they log before the close makes them reconnect.
@Suite("Server core: refusals")
struct RefusalCoreTests {
    /// The control messages connection `n` was sent, as `(type, reason)`, and whether it closes.
    static func refusal(_ h: inout CoreHarness, _ out: ServerOutput, _ n: UInt64) -> (String, String)? {
        let closed = out.closes.contains(ConnectionID(n))
        let sent = h.take(out).filter { $0.0 == ConnectionID(n) }.map(\.1)
        guard closed, sent.count == 1 else { return nil }
        switch sent[0] {
        case .shutdown(let reason): return ("s", reason)
        case .serverError(let reason): return ("e", reason)
        default: return nil
        }
    }

    @Test("the server's memory for unfinished messages is full: `e`, then the close")
    func heldBytesTotalIsTemporary() {
        var h = CoreHarness {
            $0.maxMessageBytes = 100_000
            $0.maxHeldBytesTotal = 10_000
        }
        _ = h.connect(1)
        _ = h.frame(1, "3")
        let out = h.frame(1, String(repeating: "x", count: 12_000))
        #expect(Self.refusal(&h, out, 1)?.0 == "e")
    }

    @Test("a message that arrives too slowly: `e`, then the close")
    func partialTimeoutIsTemporary() {
        var h = CoreHarness { $0.partialMessageTimeoutMs = 5_000 }
        _ = h.connect(1)
        _ = h.frame(1, "2")
        _ = h.frame(1, "{\"t\":")
        h.now += 6_000
        let out = h.core.tick(now: h.now)
        #expect(Self.refusal(&h, out, 1)?.0 == "e")
    }

    @Test("too many messages while the connection's token is checked: `e`, then the close")
    func queuedWhileWaitingIsTemporary() {
        var h = CoreHarness { $0.maxQueuedWhileAuthenticating = 2 }
        _ = h.connect(1)
        let auth = h.core.receive(
            ConnectionID(1), frame: ClientRequest.auth(credential: "t", isJWT: true, override: nil).message(number: 1),
            now: h.now)
        #expect(auth.tokenChecks.count == 1, "the connection waits for its token check")
        _ = h.take(auth)
        let ping = #"{"t":"c","d":{"t":"p","d":{}}}"#
        for _ in 0..<2 { #expect(h.frame(1, ping).closes.isEmpty) }
        #expect(Self.refusal(&h, h.frame(1, ping), 1)?.0 == "e")
    }

    @Test("a message over the size limit: `s`, then the close (the client would send it again)")
    func oversizedMessageIsPermanent() {
        var h = CoreHarness { $0.maxMessageBytes = 100 }
        _ = h.connect(1)
        let out = h.frame(1, String(repeating: "x", count: 200))
        #expect(Self.refusal(&h, out, 1)?.0 == "s")
    }

    @Test("a message that is not protocol v5: `s`, then the close")
    func protocolViolationIsPermanent() {
        var h = CoreHarness()
        _ = h.connect(1)
        let out = h.frame(1, #"{"t":"d","d":"not a request"}"#)
        #expect(Self.refusal(&h, out, 1)?.0 == "s")
    }
}
