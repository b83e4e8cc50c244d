import Foundation
import Hearth
import HearthWire

// REST (`/<path>.json`) and event streams (`Accept: text/event-stream`), as the Realtime
// Database serves them to firebase-admin and curl: GET/PUT/PATCH/POST/DELETE, `print=silent`,
// `format=export`, `shallow`, `orderBy`/`startAt`/`endAt`/`equalTo`/`limitToFirst`/
// `limitToLast`, ETags (`X-Firebase-ETag`, `if-match`, `if-none-match`).

/// A REST request, parsed by the adapter (percent-decoding done, the principal resolved).
public struct RESTRequest: Sendable {
    /// The HTTP method.
    public enum Method: String, Sendable {
        /// Read (or, with `Accept: text/event-stream`, listen).
        case get = "GET"
        /// Overwrite.
        case put = "PUT"
        /// Update children (keys are relative paths).
        case patch = "PATCH"
        /// Add a child under a new push id.
        case post = "POST"
        /// Remove.
        case delete = "DELETE"
    }
    /// The method.
    public var method: Method
    /// The database path (the URL path without `.json`).
    public var path: Path
    /// Query-string parameters, decoded.
    public var parameters: [String: String]
    /// The body, for PUT, PATCH and POST.
    public var body: String?
    /// Who asks.
    public var principal: Principal
    /// `X-Firebase-ETag: true`: answer with an `ETag` header.
    public var wantsETag: Bool = false
    /// `if-match`: write only when the current value's ETag is this.
    public var ifMatch: String?
    /// `if-none-match`: answer 304 when the current value's ETag is this.
    public var ifNoneMatch: String?

    /// A request.
    public init(
        method: Method, path: Path, parameters: [String: String] = [:], body: String? = nil, principal: Principal
    ) {
        self.method = method
        self.path = path
        self.parameters = parameters
        self.body = body
        self.principal = principal
    }
}

/// The answer to a REST request.
public struct RESTResponse: Sendable, Equatable {
    /// The HTTP status.
    public var status: Int
    /// Extra headers (`ETag`); the adapter adds content type and length.
    public var headers: [String: String]
    /// The JSON body (empty for 204 and 304).
    public var body: String

    /// A response.
    public init(status: Int, headers: [String: String] = [:], body: String) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    static func error(_ status: Int, _ message: String) -> RESTResponse {
        RESTResponse(
            status: status, body: JSONValue.object([JSONMember(key: "error", value: .string(message))]).serialized())
    }
}

extension ServerCore {
    /// The ETag of a value: its hash, or `null_etag` for no data.
    public static func etag(_ node: Node) -> String { node.isEmpty ? "null_etag" : node.hash }

    /// Answers a REST request. The output holds the durable writes the response must wait
    /// for and the pushes the write causes.
    public mutating func rest(_ request: RESTRequest, now: Int64) -> (RESTResponse, ServerOutput) {
        self.now = max(self.now, now)
        var out = ServerOutput()
        let path = request.path
        let p = request.parameters
        let silent = p["print"] == "silent"
        func denied() -> RESTResponse { .error(401, "Permission denied") }
        func body() -> Result<JSONValue, RESTResponse> {
            guard let text = request.body, !text.isEmpty else {
                return .failure(.error(400, "Invalid data; couldn't parse JSON object, array, or value."))
            }
            guard text.utf8.count <= configuration.maxRESTBodyBytes else {
                return .failure(.error(413, "Request body is larger than \(configuration.maxRESTBodyBytes) bytes"))
            }
            do { return .success(try JSONValue.parse(text)) } catch {
                return .failure(.error(400, "Invalid data; couldn't parse JSON object, array, or value (\(error))"))
            }
        }
        func written(_ node: Node, at path: Path) -> RESTResponse {
            if silent { return RESTResponse(status: 204, body: "") }
            return RESTResponse(
                status: 200, body: (p["format"] == "export" ? node.exportJSON() : node.plainJSON()).serialized())
        }

        switch request.method {
        case .get:
            let query: QuerySpec
            switch ServerCore.restQuery(p) {
            case .failure(let r): return (r, out)
            case .success(let q): query = q
            }
            guard mayRead(path, query, as: request.principal).allowed else { return (denied(), out) }
            let node = view(path, query)
            var headers: [String: String] = [:]
            let tag = ServerCore.etag(node)
            if request.wantsETag { headers["ETag"] = tag }
            if let none = request.ifNoneMatch, none == tag {
                return (RESTResponse(status: 304, headers: headers, body: ""), out)
            }
            let json: JSONValue
            if p["shallow"] == "true" {
                if node.isLeaf || node.isEmpty {
                    json = node.plainJSON()
                } else {
                    json = .object(node.children.map { JSONMember(key: $0.key.string, value: .bool(true)) })
                }
            } else {
                json = p["format"] == "export" ? node.exportJSON() : node.plainJSON()
            }
            return (RESTResponse(status: 200, headers: headers, body: json.serialized()), out)

        case .put, .delete:
            let node: Node
            if request.method == .delete {
                node = .empty
            } else {
                switch body() {
                case .failure(let r): return (r, out)
                case .success(let json):
                    do { node = try validated(json, at: path) } catch { return (.error(400, error.description), out) }
                }
            }
            if let match = request.ifMatch {
                let current = data.child(at: path)
                if match != ServerCore.etag(current) {
                    return (
                        RESTResponse(
                            status: 412, headers: ["ETag": ServerCore.etag(current)],
                            body: current.plainJSON().serialized()), out
                    )
                }
            }
            guard mayWrite(path, [(.root, node)], as: request.principal).allowed else {
                return (denied(), out)
            }
            commitSet(path, node, into: &out)
            var response =
                request.method == .delete
                ? (silent ? RESTResponse(status: 204, body: "") : RESTResponse(status: 200, body: "null"))
                : written(data.child(at: path), at: path)
            if request.wantsETag || request.ifMatch != nil {
                response.headers["ETag"] = ServerCore.etag(data.child(at: path))
            }
            return (response, out)

        case .patch:
            let json: JSONValue
            switch body() {
            case .failure(let r): return (r, out)
            case .success(let j): json = j
            }
            guard case .object(let members) = json else {
                return (.error(400, "Invalid data; an update must be a JSON object."), out)
            }
            var children: [(path: Path, node: Node)]
            do {
                var raw: [(Path, JSONValue)] = []
                for m in members {
                    do { raw.append((try Path(validating: m.key), m.value)) } catch { throw WriteError.path(error) }
                }
                children = try validated(raw, at: path)
            } catch let error as WriteError {
                return (.error(400, error.description), out)
            } catch {
                return (.error(400, "\(error)"), out)
            }
            guard mayWrite(path, children, as: request.principal).allowed else {
                return (denied(), out)
            }
            commitMerge(path, children, into: &out)
            if silent { return (RESTResponse(status: 204, body: ""), out) }
            // Firebase answers with the update as written.
            let echoed = JSONValue.object(
                children.map {
                    JSONMember(key: $0.path.wireString, value: data.child(at: path.appending($0.path)).plainJSON())
                })
            return (RESTResponse(status: 200, body: echoed.serialized()), out)

        case .post:
            let json: JSONValue
            switch body() {
            case .failure(let r): return (r, out)
            case .success(let j): json = j
            }
            let key = pushIDs.next(now: now, using: &rng)
            let at = path.child(ChildKey(key))
            let node: Node
            do { node = try validated(json, at: at) } catch { return (.error(400, error.description), out) }
            guard mayWrite(at, [(.root, node)], as: request.principal).allowed else {
                return (denied(), out)
            }
            commitSet(at, node, into: &out)
            if silent { return (RESTResponse(status: 204, body: ""), out) }
            return (
                RESTResponse(
                    status: 200, body: JSONValue.object([JSONMember(key: "name", value: .string(key))]).serialized()),
                out
            )
        }
    }

    /// Opens an event stream (`GET` with `Accept: text/event-stream`) as connection `id`:
    /// the first event puts the current data; every change after is a `put` or `patch`.
    /// A refusal is answered as a plain response instead.
    public mutating func openEventStream(
        _ id: ConnectionID, _ request: RESTRequest, now: Int64
    ) -> Result<ServerOutput, RESTResponse> {
        self.now = max(self.now, now)
        let query: QuerySpec
        switch ServerCore.restQuery(request.parameters) {
        case .failure(let r): return .failure(r)
        case .success(let q): query = q
        }
        guard mayRead(request.path, query, as: request.principal).allowed else {
            return .failure(.error(401, "Permission denied"))
        }
        precondition(connections[id] == nil, "connection \(id) opened twice")
        var c = Connection(kind: .eventStream, principal: request.principal, lastHeard: now, lastSent: now)
        let listen = Listen(path: request.path, query: listenQuery(query), tag: nil)
        c.listens[ListenKey(path: listen.path, query: listen.query)] = listen
        connections[id] = c
        var out = ServerOutput()
        out.messages.append((id, ServerCore.streamEvent("put", "/", view(request.path, listen.query).plainJSON())))
        return .success(out)
    }

    static func streamEvent(_ name: String, _ path: String, _ data: JSONValue) -> String {
        EventStreamFormat.event(
            name,
            JSONValue.object([
                JSONMember(key: "path", value: .string(path)), JSONMember(key: "data", value: data),
            ]).serialized())
    }

    mutating func notifyEventStream(
        _ id: ConnectionID, _ l: Listen, old: Node, changedAt paths: [Path], merge: (Path, [(path: Path, node: Node)])?,
        into out: inout ServerOutput
    ) {
        func rel(_ p: Path) -> String { "/" + (l.path.relativePath(to: p) ?? .root).wireString }
        connections[id]?.lastSent = now
        if !l.query.loadsAllData {
            let before = l.query.window(of: old.child(at: l.path)).node
            let after = view(l.path, l.query)
            if before != after { out.messages.append((id, ServerCore.streamEvent("put", "/", after.plainJSON()))) }
            return
        }
        if let (at, children) = merge, l.path.contains(at) {
            let d = JSONValue.object(
                children.map {
                    JSONMember(key: $0.path.wireString, value: data.child(at: at.appending($0.path)).plainJSON())
                })
            out.messages.append((id, ServerCore.streamEvent("patch", rel(at), d)))
            return
        }
        if merge == nil, paths.count == 1, l.path.contains(paths[0]) {
            out.messages.append(
                (id, ServerCore.streamEvent("put", rel(paths[0]), data.child(at: paths[0]).plainJSON())))
            return
        }
        let after = data.child(at: l.path)
        if old.child(at: l.path) != after {
            out.messages.append((id, ServerCore.streamEvent("put", "/", after.plainJSON())))
        }
    }

    /// Reads REST query parameters into a query (Firebase: filtering needs `orderBy`).
    static func restQuery(_ p: [String: String]) -> Result<QuerySpec, RESTResponse> {
        let filters = ["startAt", "startAfter", "endAt", "endBefore", "equalTo", "limitToFirst", "limitToLast"]
        guard let orderByText = p["orderBy"] else {
            if filters.contains(where: { p[$0] != nil }) {
                return .failure(.error(400, "orderBy must be defined when other query parameters are defined"))
            }
            return .success(.default)
        }
        guard case .string(let orderBy)? = try? JSONValue.parse(orderByText) else {
            return .failure(.error(400, "orderBy must be a valid JSON encoded path"))
        }
        if p["shallow"] == "true" { return .failure(.error(400, "shallow cannot be combined with a query")) }
        do {
            var q: QuerySpec
            switch orderBy {
            case "$key": q = QuerySpec(orderBy: .key)
            case "$value": q = QuerySpec(orderBy: .value)
            case "$priority": q = QuerySpec(orderBy: .priority)
            default: q = QuerySpec(orderBy: .child(try QuerySpec.parseChildPath(orderBy)))
            }
            func bound(_ name: String) throws -> (Node, ChildKey?)? {
                guard let text = p[name] else { return nil }
                if let v = try? JSONValue.parse(text) { return (try Node(json: v), nil) }
                // `value,"key"` as the JavaScript SDK's REST client sends it.
                guard let comma = text.lastIndex(of: ","),
                    let v = try? JSONValue.parse(String(text[..<comma])),
                    case .string(let k)? = try? JSONValue.parse(String(text[text.index(after: comma)...]))
                else { throw RESTQueryError("\(name) must be a JSON value") }
                return (try Node(json: v), ChildKey(k))
            }
            if let (v, k) = try bound("equalTo") { q = try q.equalTo(v, key: k) }
            if let (v, k) = try bound("startAt") { q = try q.startAt(v, key: k) }
            if let (v, k) = try bound("startAfter") { q = try q.startAfter(v, key: k) }
            if let (v, k) = try bound("endAt") { q = try q.endAt(v, key: k) }
            if let (v, k) = try bound("endBefore") { q = try q.endBefore(v, key: k) }
            func limit(_ name: String) throws -> Int? {
                guard let text = p[name] else { return nil }
                guard let n = Int(text), n > 0 else { throw RESTQueryError("\(name) must be a positive integer") }
                return n
            }
            if let n = try limit("limitToFirst") { q = try q.limitToFirst(n) }
            if let n = try limit("limitToLast") { q = try q.limitToLast(n) }
            return .success(q)
        } catch let e as RESTQueryError {
            return .failure(.error(400, e.message))
        } catch {
            return .failure(.error(400, "\(error)"))
        }
    }
}

struct RESTQueryError: Error {
    let message: String
    init(_ message: String) { self.message = message }
}

/// A refusal travels as the failure of a `Result` until it is answered.
extension RESTResponse: Error {}
