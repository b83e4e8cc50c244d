import Hearth
import HearthModel
@_spi(HearthInternals) import HearthWire
@testable import HearthDatabase

/// Something that happens at a time in the simulated world.
enum SimEvent: Sendable {
    /// A whole client message reaches the server.
    case toServer(conn: UInt64, text: String)
    /// A whole server message reaches the client.
    case toClient(conn: UInt64, text: String)
    /// The server accepts the connection (its hello follows).
    case accept(conn: UInt64)
    /// The client's transport reports the connection open.
    case opened(conn: UInt64)
    /// The client's transport reports the connection gone (or the attempt failed).
    case clientClosed(conn: UInt64)
    /// The server's transport reports the connection gone.
    case serverClosed(conn: UInt64)
    /// The server's oldest unreleased output becomes durable and is released.
    case release(incarnation: Int)
    /// Client `client`'s token provider answers request `fetch` (made in its `generation`: a
    /// restart makes older answers moot).
    case tokenAnswer(client: Int, generation: Int, fetch: Int64)
    /// The server's token verifier answers a check.
    case tokenCheck(incarnation: Int, ticket: UInt64, credential: String)

    /// The connection the event belongs to, if any.
    var conn: UInt64? {
        switch self {
        case .toServer(let c, _), .toClient(let c, _), .accept(let c), .opened(let c), .clientClosed(let c),
            .serverClosed(let c):
            c
        case .release, .tokenAnswer, .tokenCheck: nil
        }
    }
}

/// What a client request on a connection was, so the simulator can tell which write or get
/// the server is answering.
enum SentRequest: Sendable {
    case write(Int64)
    case get(UInt64, QueryLocation)
    /// An onDisconnect operation (set, update, remove or cancel), by its store id.
    case onDisconnect(Int64)
}

/// One connection (attempt) between a client and the server, as TCP carries it: FIFO in each
/// direction, nothing ordered across connections.
struct SimConnection {
    let id: UInt64
    let client: Int
    let link: ConnectionID
    /// The server incarnation that accepted it (set on accept).
    var incarnation = -1
    /// The transport is up: neither side closed it and the network did not drop it.
    var up = true
    /// The server core holds it (connected and not yet told it closed).
    var serverOpen = false
    /// When the last message each way is delivered (FIFO: no later message arrives earlier).
    var lastToServer: Int64 = 0
    var lastToClient: Int64 = 0
    /// Client requests sent on it, by request number.
    var requests: [Int: SentRequest] = [:]
    /// The onDisconnect operations the server core accepted on it and holds, in order (a
    /// cancel it accepted removed those at and below its path): what must run, once, when
    /// the server loses it.
    var armed: [OnDisconnectOperation] = []
    /// The credential of the last `auth` the client sent on it.
    var credential: String?
}

/// A time-ordered queue of events; ties keep insertion order.
struct SimNetwork {
    private(set) var events: [(time: Int64, seq: UInt64, event: SimEvent)] = []
    private var seq: UInt64 = 0

    var isEmpty: Bool { events.isEmpty }
    var count: Int { events.count }

    mutating func schedule(_ event: SimEvent, at time: Int64) {
        seq += 1
        events.append((time, seq, event))
    }

    /// The time of the earliest event.
    var nextTime: Int64? { events.min(by: { ($0.time, $0.seq) < ($1.time, $1.seq) })?.time }

    /// Removes and returns the earliest event if it is due by `time`.
    mutating func pop(dueBy time: Int64) -> (time: Int64, event: SimEvent)? {
        guard let i = events.indices.min(by: { (events[$0].time, events[$0].seq) < (events[$1].time, events[$1].seq) }),
            events[i].time <= time
        else { return nil }
        let e = events.remove(at: i)
        return (e.time, e.event)
    }

    /// Drops every event of connection `conn` that matches `filter` (lost in the network).
    mutating func drop(conn: UInt64, where filter: (SimEvent) -> Bool = { _ in true }) {
        events.removeAll { $0.event.conn == conn && filter($0.event) }
    }

    /// Drops every release (a server crash loses its unreleased outputs).
    mutating func dropReleases() {
        events.removeAll { if case .release = $0.event { true } else { false } }
    }
}
