import Hearth
@_spi(HearthInternals) @testable import HearthServer
@_spi(HearthInternals) import HearthWire
import Testing

/// Drives a ServerCore directly (no sockets) and checks the release rule on every output.
struct CoreHarness {
    var core: ServerCore
    var now: Int64 = 1_700_000_000_000
    /// Every write the core asked to make durable, in order.
    var durable: [DurableWrite] = []

    init(
        data: Node = .empty, emulator: Bool = true, policy: (any AccessPolicy)? = nil,
        configure: (inout ServerCore.Configuration) -> Void = { _ in }
    ) {
        var c = ServerCore.Configuration()
        c.emulator = emulator
        configure(&c)
        core = ServerCore(data: data, configuration: c, policy: policy, seed: 42)
    }

    /// Signs connection `n` in as `principal` (as if its token checked out).
    mutating func signIn(_ n: UInt64, _ principal: Principal, number: Int = 900) {
        let out = core.receive(
            ConnectionID(n),
            frame: ClientRequest.auth(credential: "t", isJWT: true, override: nil).message(number: number), now: now)
        _ = take(core.tokenChecked(out.tokenChecks[0].ticket, .valid(principal), now: now))
    }

    mutating func take(_ out: ServerOutput) -> [(ConnectionID, ServerMessage)] {
        core.checkBudget()
        durable += out.writes
        return out.renderedMessages().map { ($0.0, try! ServerMessage.decode($0.1)) }
    }

    /// Opens a connection and returns its hello.
    mutating func connect(_ n: UInt64) -> ServerMessage {
        let out = take(core.connect(ConnectionID(n), now: now))
        return out[0].1
    }

    /// Sends request `number` from connection `n`; returns what the core sent to anyone.
    mutating func send(_ n: UInt64, _ number: Int, _ request: ClientRequest) -> [(UInt64, ServerMessage)] {
        take(core.receive(ConnectionID(n), frame: request.message(number: number), now: now)).map {
            ($0.0.rawValue, $0.1)
        }
    }

    mutating func frame(_ n: UInt64, _ text: String) -> ServerOutput {
        core.receive(ConnectionID(n), frame: text, now: now)
    }

    mutating func disconnect(_ n: UInt64) -> [(UInt64, ServerMessage)] {
        take(core.disconnect(ConnectionID(n), now: now)).map { ($0.0.rawValue, $0.1) }
    }

    mutating func tick(_ advance: Int64) -> (messages: [(UInt64, ServerMessage)], closes: [ConnectionID]) {
        now += advance
        let out = core.tick(now: now)
        return (take(out).map { ($0.0.rawValue, $0.1) }, out.closes)
    }

    mutating func rest(
        _ method: RESTRequest.Method, _ path: Path, _ parameters: [String: String] = [:], body: String? = nil,
        principal: Principal = .admin, edit: (inout RESTRequest) -> Void = { _ in }
    ) -> RESTResponse {
        var r = RESTRequest(method: method, path: path, parameters: parameters, body: body, principal: principal)
        edit(&r)
        let (reply, out) = core.rest(r, now: now)
        _ = take(out)
        return reply.render()
    }
}

func json(_ text: String) -> JSONValue { try! JSONValue.parse(text) }
func node(_ text: String) -> Node { try! Node(jsonText: text) }

/// The response to request `number` among messages.
func response(_ messages: [(UInt64, ServerMessage)], _ number: Int) -> (status: String, data: JSONValue?)? {
    for (_, m) in messages { if case let .response(n, s, d) = m, n == number { return (s, d) } }
    return nil
}
