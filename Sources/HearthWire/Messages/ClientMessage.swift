/// A message a client sends, decoded (firebase-js-sdk `core/PersistentConnection.ts`).
@_spi(HearthInternals) public enum ClientMessage: Sendable, Equatable {
    /// A data message `{"t":"d","d":{"r":N,"a":ACTION,"b":BODY}}`.
    case request(number: Int, ClientRequest)
    /// A request the server does not know: answered with an error, not a disconnect.
    case unknownRequest(number: Int, action: String)
    /// The control message `{"t":"c","d":{"t":"p"}}`: answered with a pong.
    case ping
    /// Any other control message (`a` switch-ack, `n` end-transmission: long-poll upgrade
    /// leftovers a WebSocket server ignores).
    case otherControl(String)

    /// Decodes one reassembled message.
    /// - Throws: ``WireError`` naming what is wrong.
    @_spi(HearthInternals) public static func decode(_ text: String) throws(WireError) -> ClientMessage {
        let json: JSONValue
        do { json = try JSONValue.parse(text) } catch { throw .notJSON(error.description) }
        guard case .object = json, let type = json["t"]?.stringValue, let body = json["d"], case .object = body else {
            throw .badEnvelope("expected {\"t\":\"d\"|\"c\",\"d\":{…}}")
        }
        switch type {
        case "c":
            let control = body["t"]?.stringValue ?? ""
            return control == "p" ? .ping : .otherControl(control)
        case "d":
            guard let r = body["r"]?.doubleValue, r == r.rounded(), r >= 0, r < 9_007_199_254_740_992 else {
                throw .badEnvelope("a data message needs a request number \"r\"")
            }
            let number = Int(r)
            guard let action = body["a"]?.stringValue else {
                throw .badEnvelope("a data message needs an action \"a\"")
            }
            let b = body["b"] ?? .object([])
            if let request = try ClientRequest.decode(action: action, body: b) {
                return .request(number: number, request)
            }
            return .unknownRequest(number: number, action: action)
        default:
            throw .badEnvelope("unknown message type \"\(type)\"")
        }
    }
}

/// One client request (the `a` and `b` of a data message).
@_spi(HearthInternals) public enum ClientRequest: Sendable, Equatable {
    /// `q`: listen at a path, with a query and tag for non-default queries, the hash of the
    /// data the client already has (`""` for none) and, when that data is large, its
    /// `CompoundHash` (`ch`), so that the server can send only the ranges that changed.
    /// A `ch` naming more than `CompoundHash.maxRanges` ranges decodes as none.
    case listen(path: Path, query: QuerySpec, tag: Int?, hash: String, compoundHash: CompoundHash? = nil)
    /// `n`: stop listening.
    case unlisten(path: Path, query: QuerySpec, tag: Int?)
    /// `p`: overwrite; `hash` present makes it compare-and-set (transactions); `stamp` is
    /// Hearth's exactly-once extension (``WriteStamp``), sent only to a server that offers it.
    case put(path: Path, data: JSONValue, hash: String?, stamp: WriteStamp? = nil)
    /// `m`: merge; keys of `data` are paths relative to `path`; `stamp` as for ``put(path:data:hash:stamp:)``.
    case merge(path: Path, data: [(Path, JSONValue)], stamp: WriteStamp? = nil)
    /// `g`: read once.
    case get(path: Path, query: QuerySpec)
    /// `o`: on disconnect, overwrite.
    case onDisconnectPut(path: Path, data: JSONValue)
    /// `om`: on disconnect, merge.
    case onDisconnectMerge(path: Path, data: [(Path, JSONValue)])
    /// `oc`: cancel the on-disconnect operations at and below a path.
    case onDisconnectCancel(path: Path)
    /// `auth` (a JWT) or `gauth` (any other token); `override` is `authvar`, the auth variable
    /// an admin token asks to act as.
    case auth(credential: String, isJWT: Bool, override: JSONValue?)
    /// `unauth`.
    case unauth
    /// `appcheck`: the client's App Check token (firebase-js-sdk `tryAppCheck`), sent after
    /// the hello and whenever the token changes.
    case appCheck(token: String)
    /// `unappcheck`: the app no longer has an App Check token.
    case unappCheck
    /// `s`: client statistics (acknowledged, otherwise ignored).
    case stats

    @_spi(HearthInternals) public static func == (lhs: ClientRequest, rhs: ClientRequest) -> Bool {
        switch (lhs, rhs) {
        case let (.listen(a, b, c, d, x), .listen(e, f, g, h, y)): a == e && b == f && c == g && d == h && x == y
        case let (.unlisten(a, b, c), .unlisten(e, f, g)): a == e && b == f && c == g
        case let (.put(a, b, c, d), .put(e, f, g, h)): a == e && b == f && c == g && d == h
        case let (.merge(a, b, c), .merge(e, f, g)):
            a == e && b.elementsEqual(f, by: { $0.0 == $1.0 && $0.1 == $1.1 }) && c == g
        case let (.get(a, b), .get(e, f)): a == e && b == f
        case let (.onDisconnectPut(a, b), .onDisconnectPut(e, f)): a == e && b == f
        case let (.onDisconnectMerge(a, b), .onDisconnectMerge(e, f)):
            a == e && b.elementsEqual(f, by: { $0.0 == $1.0 && $0.1 == $1.1 })
        case let (.onDisconnectCancel(a), .onDisconnectCancel(b)): a == b
        case let (.auth(a, b, c), .auth(e, f, g)): a == e && b == f && c == g
        case let (.appCheck(a), .appCheck(b)): a == b
        case (.unauth, .unauth), (.stats, .stats), (.unappCheck, .unappCheck): true
        default: false
        }
    }

    /// Decodes a request body; `nil` for an action this server does not know.
    static func decode(action: String, body b: JSONValue) throws(WireError) -> ClientRequest? {
        func path() throws(WireError) -> Path {
            guard let p = b["p"]?.stringValue else {
                throw .badRequest(action: action, reason: "\"p\" must be a path string")
            }
            return try wirePath(p)
        }
        func tag() throws(WireError) -> Int? {
            guard let t = b["t"], !t.isNull else { return nil }
            guard let d = t.doubleValue, d == d.rounded(), abs(d) < 1e15 else {
                throw .badRequest(action: action, reason: "\"t\" must be an integer tag")
            }
            return Int(d)
        }
        func data() throws(WireError) -> JSONValue {
            guard let d = b["d"] else { throw .badRequest(action: action, reason: "\"d\" is missing") }
            return d
        }
        func children() throws(WireError) -> [(Path, JSONValue)] {
            guard case .object(let members) = try data() else {
                throw .badRequest(action: action, reason: "\"d\" must be an object of relative paths")
            }
            var out: [(Path, JSONValue)] = []
            out.reserveCapacity(members.count)
            for m in members { out.append((try wirePath(m.key), m.value)) }
            return out
        }
        switch action {
        case "q", "l":
            let h = b["h"]?.stringValue ?? ""
            return .listen(
                path: try path(), query: try WireQuery.decode(b["q"]), tag: try tag(), hash: h,
                compoundHash: try CompoundHash.decode(b["ch"], action: action))
        case "n", "u":
            return .unlisten(path: try path(), query: try WireQuery.decode(b["q"]), tag: try tag())
        case "p":
            let h = b["h"]
            if let h, !h.isNull, h.stringValue == nil {
                throw .badRequest(action: action, reason: "\"h\" must be a string")
            }
            return .put(
                path: try path(), data: try data(), hash: h?.stringValue,
                stamp: try WriteStamp.decode(action: action, body: b))
        case "m":
            return .merge(path: try path(), data: try children(), stamp: try WriteStamp.decode(action: action, body: b))
        case "g":
            return .get(path: try path(), query: try WireQuery.decode(b["q"]))
        case "o":
            return .onDisconnectPut(path: try path(), data: try data())
        case "om":
            return .onDisconnectMerge(path: try path(), data: try children())
        case "oc":
            return .onDisconnectCancel(path: try path())
        case "auth", "gauth":
            guard let cred = b["cred"]?.stringValue else {
                throw .badRequest(action: action, reason: "\"cred\" must be a string")
            }
            return .auth(credential: cred, isJWT: action == "auth", override: b["authvar"])
        case "unauth":
            return .unauth
        case "appcheck":
            guard let token = b["token"]?.stringValue else {
                throw .badRequest(action: action, reason: "\"token\" must be a string")
            }
            return .appCheck(token: token)
        case "unappcheck":
            return .unappCheck
        case "s":
            return .stats
        default:
            return nil
        }
    }

    /// The request as a client sends it: action and body.
    @_spi(HearthInternals) public var encoded: (action: String, body: JSONValue) {
        func obj(_ m: [(String, JSONValue?)]) -> JSONValue {
            .object(m.compactMap { k, v in v.map { JSONMember(key: k, value: $0) } })
        }
        func rel(_ d: [(Path, JSONValue)]) -> JSONValue {
            .object(d.map { JSONMember(key: $0.0.wireString, value: $0.1) })
        }
        func p(_ path: Path) -> JSONValue { .string("/" + path.wireString) }
        func t(_ tag: Int?) -> JSONValue? { tag.map { .number(Double($0)) } }
        switch self {
        case let .listen(path, query, tag, hash, compoundHash):
            return (
                "q",
                obj([
                    ("p", p(path)), ("q", WireQuery.encode(query)), ("t", t(tag)), ("h", .string(hash)),
                    ("ch", compoundHash?.wire),
                ])
            )
        case let .unlisten(path, query, tag):
            return ("n", obj([("p", p(path)), ("q", WireQuery.encode(query)), ("t", t(tag))]))
        case let .put(path, data, hash, stamp):
            return (
                "p", obj([("p", p(path)), ("d", data), ("h", hash.map(JSONValue.string))] + (stamp?.members ?? []))
            )
        case let .merge(path, data, stamp):
            return ("m", obj([("p", p(path)), ("d", rel(data))] + (stamp?.members ?? [])))
        case let .get(path, query):
            return ("g", obj([("p", p(path)), ("q", WireQuery.encode(query) ?? .object([]))]))
        case let .onDisconnectPut(path, data):
            return ("o", obj([("p", p(path)), ("d", data)]))
        case let .onDisconnectMerge(path, data):
            return ("om", obj([("p", p(path)), ("d", rel(data))]))
        case let .onDisconnectCancel(path):
            return ("oc", obj([("p", p(path)), ("d", .null)]))
        case let .auth(cred, isJWT, override):
            return (isJWT ? "auth" : "gauth", obj([("cred", .string(cred)), ("authvar", override)]))
        case .unauth:
            return ("unauth", .object([]))
        case .appCheck(let token):
            return ("appcheck", obj([("token", .string(token))]))
        case .unappCheck:
            return ("unappcheck", .object([]))
        case .stats:
            return ("s", obj([("c", .object([]))]))
        }
    }

    /// The whole data message text for request number `number`.
    @_spi(HearthInternals) public func message(number: Int) -> String {
        let (a, b) = encoded
        return JSONValue.object([
            JSONMember(key: "t", value: "d"),
            JSONMember(
                key: "d",
                value: .object([
                    JSONMember(key: "r", value: .number(Double(number))),
                    JSONMember(key: "a", value: .string(a)),
                    JSONMember(key: "b", value: b),
                ])),
        ]).serialized()
    }
}
