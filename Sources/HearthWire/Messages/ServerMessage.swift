/// A message the server sends (firebase-js-sdk `realtime/Connection.ts` and
/// `core/PersistentConnection.ts`, `onDataMessage_` / `onDataPush_`).
@_spi(HearthInternals) public enum ServerMessage: Sendable, Equatable {
    /// The handshake, first on every connection: `ts` the server's clock (ms), `v` the
    /// protocol version, `h` the host to reconnect to, `s` the session id, and `x` the
    /// protocol extensions the server offers (Hearth's; absent when empty).
    ///
    /// Firebase's clients read only the fields they know from the hello and ignore the rest
    /// (firebase-js-sdk `realtime/Connection.ts` `onHandshake_` reads `ts`, `v`, `h`, `s`;
    /// firebase-ios-sdk `FConnection.m` `onHandshake:` and firebase-android-sdk
    /// `connection/Connection.java` `onHandshake` read `ts`, `h`, `s` by key), so `x` is safe
    /// to send to them.
    case hello(timestamp: Int64, host: String, sessionID: String, extensions: [String] = [])
    /// The answer to request `number`: `status` is `"ok"` or an error code
    /// (`permission_denied`, `datastale`, `expired_token`, `invalid_token`, …).
    case response(number: Int, status: String, data: JSONValue?)
    /// Push `d`: the data at `path` is now `data` (for the query tagged `tag`, if any).
    case set(path: Path, data: JSONValue, tag: Int?)
    /// Push `m`: children at relative paths under `path` are now these values.
    case merge(path: Path, data: [(Path, JSONValue)], tag: Int?)
    /// Push `rm`: the answer to a listen's compound hash — only the ranges under `path` whose
    /// hash differed, each replaced in turn (for the query tagged `tag`, if any).
    case rangeMerge(path: Path, ranges: [WireRangeMerge], tag: Int?)
    /// Push `c`: a listen is revoked (its permission was lost).
    case listenRevoked(path: Path, query: QuerySpec)
    /// Push `ac`: the connection's auth was revoked (`status` e.g. `expired_token`).
    case authRevoked(status: String, reason: String)
    /// Control `o`: the answer to a ping.
    case pong
    /// Control `s`: the server is closing the connection for good, and why (Firebase's
    /// clients stop reconnecting: `onKill_` in firebase-js-sdk `realtime/Connection.ts`).
    case shutdown(reason: String)
    /// Control `r` (reset): connect to `host` (`HOST[:PORT]`) instead — Firebase's front ends
    /// send it in place of the hello to a client that reached the wrong server.
    case reset(host: String)
    /// Control `e`: an error the server reports (Firebase's clients log it).
    case serverError(String)
    /// Push `sd`: security debug output (Firebase's clients log its `msg`).
    case securityDebug(message: String)
    /// Push `apc`: the connection's App Check token was revoked (Firebase's clients log it and
    /// keep the connection).
    case appCheckRevoked(status: String, reason: String)

    @_spi(HearthInternals) public static func == (lhs: ServerMessage, rhs: ServerMessage) -> Bool {
        lhs.text == rhs.text
    }

    /// The protocol version the server speaks.
    @_spi(HearthInternals) public static let protocolVersion = "5"

    /// The hello's `x` entry for Hearth's exactly-once writes: the client may stamp `p`/`m`
    /// with a ``WriteStamp``.
    @_spi(HearthInternals) public static let writeIDsExtension = "w"

    /// The message's JSON text.
    @_spi(HearthInternals) public var text: String {
        // A request's `ok` — one for every write a server acknowledges — is written straight
        // out: the bytes `json.serialized()` gives (a request number below 2^53 prints as an
        // integer), without building and serializing a JSON tree for each.
        if case let .response(number, "ok", nil) = self, number >= 0, number < 1 << 53 {
            return #"{"t":"d","d":{"r":"# + String(number) + #","b":{"s":"ok","d":{}}}}"#
        }
        return json.serialized()
    }

    /// The message as JSON.
    @_spi(HearthInternals) public var json: JSONValue {
        func m(_ k: String, _ v: JSONValue) -> JSONMember { JSONMember(key: k, value: v) }
        func control(_ t: String, _ d: JSONValue) -> JSONValue {
            .object([m("t", "c"), m("d", .object([m("t", .string(t)), m("d", d)]))])
        }
        func push(_ a: String, _ b: [JSONMember]) -> JSONValue {
            .object([m("t", "d"), m("d", .object([m("a", .string(a)), m("b", .object(b))]))])
        }
        switch self {
        case let .hello(ts, host, session, extensions):
            var fields = [
                m("ts", .integer(exactly: ts)), m("v", .string(ServerMessage.protocolVersion)),
                m("h", .string(host)), m("s", .string(session)),
            ]
            if !extensions.isEmpty { fields.append(m("x", .array(extensions.map { .string($0) }))) }
            return control("h", .object(fields))
        case let .response(number, status, data):
            var b = [m("s", .string(status))]
            b.append(m("d", data ?? (status == "ok" ? .object([]) : .string(status))))
            return .object([m("t", "d"), m("d", .object([m("r", .number(Double(number))), m("b", .object(b))]))])
        case let .set(path, data, tag):
            var b = [m("p", .string(path.wireString)), m("d", data)]
            if let tag { b.append(m("t", .number(Double(tag)))) }
            return push("d", b)
        case let .merge(path, data, tag):
            var b = [m("p", .string(path.wireString)), m("d", .object(data.map { m($0.0.wireString, $0.1) }))]
            if let tag { b.append(m("t", .number(Double(tag)))) }
            return push("m", b)
        case let .rangeMerge(path, ranges, tag):
            var b = [m("p", .string(path.wireString)), m("d", .array(ranges.map(\.json)))]
            if let tag { b.append(m("t", .number(Double(tag)))) }
            return push("rm", b)
        case let .listenRevoked(path, query):
            var b = [m("p", .string(path.wireString))]
            if let q = WireQuery.encode(query) { b.append(m("q", q)) }
            return push("c", b)
        case let .authRevoked(status, reason):
            return push("ac", [m("s", .string(status)), m("d", .string(reason))])
        case .pong:
            return control("o", .object([]))
        case .shutdown(let reason):
            return control("s", .string(reason))
        case .reset(let host):
            return control("r", .string(host))
        case .serverError(let text):
            return control("e", .string(text))
        case .securityDebug(let message):
            return push("sd", [m("msg", .string(message))])
        case let .appCheckRevoked(status, reason):
            return push("apc", [m("s", .string(status)), m("d", .string(reason))])
        }
    }

    /// Decodes a server message (for clients and tests).
    /// - Throws: ``WireError``.
    @_spi(HearthInternals) public static func decode(_ text: String) throws(WireError) -> ServerMessage {
        let json: JSONValue
        do { json = try JSONValue.parse(text) } catch { throw .notJSON(error.description) }
        guard let t = json["t"]?.stringValue, let d = json["d"] else { throw .badEnvelope("expected {\"t\",\"d\"}") }
        if t == "c" {
            switch d["t"]?.stringValue {
            case "h"?:
                let body = d["d"]
                let ts =
                    body?["ts"].flatMap { v -> Int64? in
                        if case .integer(let i) = v { return i }
                        return v.doubleValue.map { Int64($0) }
                    } ?? 0
                // Unknown or malformed extension entries are ignored (a client uses only what it knows).
                var extensions: [String] = []
                if case .array(let items)? = body?["x"] { extensions = items.compactMap(\.stringValue) }
                return .hello(
                    timestamp: ts, host: body?["h"]?.stringValue ?? "", sessionID: body?["s"]?.stringValue ?? "",
                    extensions: extensions)
            case "o"?: return .pong
            case "s"?: return .shutdown(reason: d["d"]?.stringValue ?? "")
            case "r"?:
                guard let host = d["d"]?.stringValue else { throw .badEnvelope("a reset needs a host") }
                return .reset(host: host)
            case "e"?: return .serverError(d["d"]?.stringValue ?? d["d"]?.serialized() ?? "")
            case let other?: throw .badEnvelope("unknown control message \"\(other)\"")
            case nil: throw .badEnvelope("unknown control message")
            }
        }
        guard t == "d" else { throw .badEnvelope("unknown message type \"\(t)\"") }
        if let r = d["r"]?.doubleValue {
            let b = d["b"]
            return .response(number: Int(r), status: b?["s"]?.stringValue ?? "", data: b?["d"])
        }
        guard let a = d["a"]?.stringValue, let b = d["b"] else { throw .badEnvelope("a push needs \"a\" and \"b\"") }
        let path = try wirePath(b["p"]?.stringValue ?? "")
        let tag = b["t"]?.doubleValue.map { Int($0) }
        switch a {
        case "d": return .set(path: path, data: b["d"] ?? .null, tag: tag)
        case "m":
            guard case .object(let members)? = b["d"] else { throw .badEnvelope("a merge push needs an object") }
            var children: [(Path, JSONValue)] = []
            for member in members { children.append((try wirePath(member.key), member.value)) }
            return .merge(path: path, data: children, tag: tag)
        case "rm":
            guard case .array(let items)? = b["d"] else { throw .badEnvelope("a range merge push needs an array") }
            var ranges: [WireRangeMerge] = []
            for item in items { ranges.append(try WireRangeMerge.decode(item)) }
            return .rangeMerge(path: path, ranges: ranges, tag: tag)
        case "c": return .listenRevoked(path: path, query: try WireQuery.decode(b["q"]))
        case "ac": return .authRevoked(status: b["s"]?.stringValue ?? "", reason: b["d"]?.stringValue ?? "")
        case "apc": return .appCheckRevoked(status: b["s"]?.stringValue ?? "", reason: b["d"]?.stringValue ?? "")
        case "sd": return .securityDebug(message: b["msg"]?.stringValue ?? "")
        default: throw .badEnvelope("unknown push \"\(a)\"")
        }
    }
}
