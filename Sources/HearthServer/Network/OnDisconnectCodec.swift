import Hearth
@_spi(HearthInternals) import HearthWire

/// The bytes of the onDisconnect journal's records and checkpoint (FORMAT.md, "The onDisconnect
/// journal"): a version byte (1), then one JSON document in UTF-8. JSON because an operation is
/// JSON as the client wrote it (kept so that its server values resolve when it runs) and so is
/// the principal's `auth`; the log compresses and checksums each record.
enum OnDisconnectCodec {
    static let version: UInt8 = 1
    static let registered: UInt8 = 1
    static let cancelled: UInt8 = 2
    static let ended: UInt8 = 3
    static let recordTypes: Set<UInt8> = [registered, cancelled, ended]
    /// Records nest an operation's data two levels down (a merge's child in its list): the
    /// parser's default depth bounds the rest.
    static let maxDepth = JSONValue.defaultMaxDepth

    struct Malformed: Error, CustomStringConvertible {
        let description: String
    }

    static func encode(_ change: OnDisconnectChange) -> (payload: [UInt8], type: UInt8) {
        switch change {
        case let .registered(session, op): (document(operation(session, op)), registered)
        case let .cancelled(session, path):
            (document(.object([member("s", .number(Double(session))), member("p", keys(path))])), cancelled)
        case .ended(let session): (document(.object([member("s", .number(Double(session)))])), ended)
        }
    }

    static func decode(_ payload: [UInt8], type: UInt8) throws(Malformed) -> OnDisconnectChange {
        let json = try parse(payload)
        let session = try sessionOf(json)
        switch type {
        case registered: return .registered(session: session, try operation(json))
        case cancelled: return .cancelled(session: session, path: try path(json["p"]))
        default: return .ended(session: session)
        }
    }

    static func encodeCheckpoint(_ sessions: [UInt64: [OnDisconnectOperation]]) -> [UInt8] {
        var all: [JSONValue] = []
        for (session, ops) in sessions.sorted(by: { $0.key < $1.key }) {
            for op in ops { all.append(operation(session, op)) }
        }
        return document(.array(all))
    }

    static func decodeCheckpoint(_ body: [UInt8]) throws(Malformed) -> [(UInt64, OnDisconnectOperation)] {
        guard case .array(let all) = try parse(body) else { throw Malformed(description: "not a list") }
        var out: [(UInt64, OnDisconnectOperation)] = []
        for json in all { out.append((try sessionOf(json), try operation(json))) }
        return out
    }

    // MARK: JSON

    private static func member(_ key: String, _ value: JSONValue) -> JSONMember { JSONMember(key: key, value: value) }

    private static func document(_ json: JSONValue) -> [UInt8] {
        var bytes: [UInt8] = [version]
        json.write(to: &bytes)
        return bytes
    }

    private static func parse(_ bytes: [UInt8]) throws(Malformed) -> JSONValue {
        guard bytes.first == version else {
            throw Malformed(description: "version \(bytes.first.map(String.init) ?? "none"), expected \(version)")
        }
        do { return try JSONValue.parse(bytes.dropFirst(), maxDepth: maxDepth) } catch {
            throw Malformed(description: "\(error)")
        }
    }

    private static func keys(_ path: Path) -> JSONValue { .array(path.keys.map { .string($0.string) }) }

    private static func path(_ json: JSONValue?) throws(Malformed) -> Path {
        guard let items = json?.arrayValue, items.count <= Path.maxDepth else {
            throw Malformed(description: "bad path")
        }
        var keys: [ChildKey] = []
        for item in items {
            guard let key = item.stringValue else { throw Malformed(description: "bad path key") }
            keys.append(ChildKey(key))
        }
        return Path(keys: keys)
    }

    private static func sessionOf(_ json: JSONValue) throws(Malformed) -> UInt64 {
        guard let d = json["s"]?.doubleValue, d >= 0, d < 0x1p53, d == d.rounded(.towardZero) else {
            throw Malformed(description: "bad session")
        }
        return UInt64(d)
    }

    private static func operation(_ session: UInt64, _ op: OnDisconnectOperation) -> JSONValue {
        var members = [
            member("s", .number(Double(session))), member("p", keys(op.path)), member("u", principal(op.principal)),
            member("b", .number(Double(op.bytes))),
        ]
        switch op.action {
        case .set(let value): members.append(member("set", value))
        case .merge(let children):
            members.append(
                member("merge", .array(children.map { .object([member("p", keys($0.path)), member("v", $0.value)]) })))
        }
        return .object(members)
    }

    private static func operation(_ json: JSONValue) throws(Malformed) -> OnDisconnectOperation {
        guard let b = json["b"]?.doubleValue, b >= 0, b < 0x1p53, b == b.rounded(.towardZero) else {
            throw Malformed(description: "bad size")
        }
        let action: OnDisconnectOperation.Action
        if let value = json["set"] {
            action = .set(value)
        } else if let children = json["merge"]?.arrayValue {
            var out: [OnDisconnectOperation.MergeChild] = []
            for c in children {
                guard let v = c["v"] else { throw Malformed(description: "merge child without a value") }
                out.append(OnDisconnectOperation.MergeChild(path: try path(c["p"]), value: v))
            }
            action = .merge(out)
        } else {
            throw Malformed(description: "neither set nor merge")
        }
        return OnDisconnectOperation(
            path: try path(json["p"]), action: action, principal: try principal(json["u"]), bytes: Int(b))
    }

    /// `null` unauthenticated, `"admin"`, or the user: `uid`, `claims`, `exp` (ms, or null) and
    /// `auth` (the rules' `auth` variable, kept as it was: an override's is not made from claims).
    private static func principal(_ p: Principal) -> JSONValue {
        switch p {
        case .unauthenticated: return .null
        case .admin: return .string("admin")
        case .user(let u):
            return .object([
                member("uid", .string(u.uid)), member("claims", u.claims),
                member("exp", u.expiresAt.map { .integer(exactly: $0) } ?? .null), member("auth", u.authVariable),
            ])
        }
    }

    private static func principal(_ json: JSONValue?) throws(Malformed) -> Principal {
        switch json {
        case .null?: return .unauthenticated
        case .string("admin")?: return .admin
        case .object?:
            guard let uid = json?["uid"]?.stringValue, let claims = json?["claims"], let auth = json?["auth"] else {
                throw Malformed(description: "bad principal")
            }
            var expires: Int64?
            switch json?["exp"] {
            case .integer(let i)?: expires = i
            case .number(let d)? where d == d.rounded(.towardZero) && abs(d) <= 0x1p53: expires = Int64(d)
            case .null?, nil: expires = nil
            default: throw Malformed(description: "bad expiry")
            }
            return .user(Principal.User(uid: uid, claims: claims, expiresAt: expires, authVariable: auth))
        default: throw Malformed(description: "bad principal")
        }
    }
}

extension Principal.User {
    /// A user exactly as journaled.
    init(uid: String, claims: JSONValue, expiresAt: Int64?, authVariable: JSONValue) {
        self.uid = uid
        self.claims = claims
        self.expiresAt = expiresAt
        self.authVariable = authVariable
    }
}
