import Foundation
import Hearth
@_spi(HearthInternals) import HearthWire

// REST (`/<path>.json`) and event streams (`Accept: text/event-stream`), as the Realtime
// Database serves them to firebase-admin and curl: GET/PUT/PATCH/POST/DELETE, `print=silent`,
// `format=export`, `shallow`, `orderBy`/`startAt`/`endAt`/`equalTo`/`limitToFirst`/
// `limitToLast`, ETags (`X-Firebase-ETag`, `if-match`, `if-none-match`).

/// A REST request, parsed by the adapter (percent-decoding done, the principal resolved).
@_spi(HearthInternals) public struct RESTRequest: Sendable {
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
    /// When the request's App Check token (`X-Firebase-AppCheck`) expires, in ms since 1970;
    /// `nil` when it sent none that was valid. Read only under
    /// ``ServerConfiguration/enforcesAppCheck``; the adapter verifies the token.
    public var appCheckExpiresAt: Int64?
    /// ``body`` parsed ahead (``parseBody()``), so the core does not parse under its lock.
    var parsed: Result<JSONValue, RESTResponse>?

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

extension RESTRequest {
    /// Parses the body now (the runtime does, before it takes the core's lock); the core
    /// then uses the result instead of parsing it again.
    package mutating func parseBody() { parsed = RESTRequest.parse(body, limit: Int.max) }

    /// A request body as JSON, or the answer refusing it.
    static func parse(_ text: String?, limit: Int) -> Result<JSONValue, RESTResponse> {
        guard let text, !text.isEmpty else {
            return .failure(.error(400, "Invalid data; couldn't parse JSON object, array, or value."))
        }
        guard text.utf8.count <= limit else {
            return .failure(.error(413, "Request body is larger than \(limit) bytes"))
        }
        do { return .success(try JSONValue.parse(text)) } catch {
            return .failure(.error(400, "Invalid data; couldn't parse JSON object, array, or value (\(error))"))
        }
    }
}

/// The answer to a REST request, rendered by whoever sends it: after the request's writes
/// are durable and outside the core's lock (a read's body — a query's window, an ETag, the
/// JSON — is computed then, from the data as it was when the request was answered).
@_spi(HearthInternals) public struct RESTReply: Sendable {
    private let make: @Sendable () -> RESTResponse

    init(_ make: @escaping @Sendable () -> RESTResponse) { self.make = make }

    /// A reply whose response is known.
    static func ready(_ response: RESTResponse) -> RESTReply { RESTReply { response } }

    /// The response.
    public func render() -> RESTResponse { make() }
}

/// The answer to a REST request.
@_spi(HearthInternals) public struct RESTResponse: Sendable, Equatable {
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
    package static func etag(_ node: Node) -> String { node.isEmpty ? "null_etag" : node.hash }

    /// Answers a REST request. The output holds the durable writes the reply must wait for
    /// and the pushes the write causes. Writes are checked against the access policy before
    /// anything about the data is compared (`if-match`) or answered.
    package mutating func rest(_ request: RESTRequest, now: Int64) -> (RESTReply, ServerOutput) {
        self.now = max(self.now, now)
        var out = ServerOutput()
        let path = request.path
        let p = request.parameters
        let silent = p["print"] == "silent"
        let export = p["format"] == "export"
        // What a write's pushes may pin until they are delivered (``OutboundMessage/weight``).
        let weight = request.body?.utf8.count ?? 0
        func refuse(_ response: RESTResponse) -> (RESTReply, ServerOutput) { (.ready(response), out) }
        let denied = RESTResponse.error(401, "Permission denied")
        func body() -> Result<JSONValue, RESTResponse> {
            if let text = request.body, text.utf8.count > configuration.maxRESTBodyBytes {
                return .failure(.error(413, "Request body is larger than \(configuration.maxRESTBodyBytes) bytes"))
            }
            return request.parsed ?? RESTRequest.parse(request.body, limit: configuration.maxRESTBodyBytes)
        }
        // App Check comes before anything else about the request, the rules included.
        if lacksAppCheck(request) { return refuse(denied) }
        if request.method != .get, let why = writesSuspended {
            return refuse(.error(503, "writes are suspended: \(why); try again later"))
        }

        switch request.method {
        case .get:
            let query: QuerySpec
            switch ServerCore.restQuery(p) {
            case .failure(let r): return refuse(r)
            case .success(let q): query = q
            }
            guard mayRead(path, query, as: request.principal).allowed else { return refuse(denied) }
            let node = data.child(at: path)
            return (RESTReply { ServerCore.read(node, query, request) }, out)

        case .put, .delete:
            let node: Node
            if request.method == .delete {
                node = .empty
            } else {
                switch body() {
                case .failure(let r): return refuse(r)
                case .success(let json):
                    do { node = try validated(json, at: path) } catch { return refuse(.error(400, error.description)) }
                }
            }
            guard let plan = allowedWrite(path, [(.root, node)], merge: false, as: request.principal) else {
                return refuse(denied)
            }
            if let match = request.ifMatch {
                // Whether the data matches is itself data: a conditional write needs read access.
                guard mayRead(path, .default, as: request.principal).allowed else { return refuse(denied) }
                let current = data.child(at: path)
                if match != ServerCore.etag(current) {
                    let etag = ServerCore.etag(current), body = current.plainJSON().serialized()
                    return refuse(RESTResponse(status: 412, headers: ["ETag": etag], body: body))
                }
            }
            apply(plan, weight: weight, into: &out)
            let written = data.child(at: path)
            let withETag = request.wantsETag || request.ifMatch != nil
            return (
                RESTReply {
                    var response =
                        request.method == .delete
                        ? RESTResponse(status: silent ? 204 : 200, body: silent ? "" : "null")
                        : RESTResponse(
                            status: silent ? 204 : 200,
                            body: silent ? "" : (export ? written.exportJSON() : written.plainJSON()).serialized())
                    if withETag { response.headers["ETag"] = ServerCore.etag(written) }
                    return response
                }, out
            )

        case .patch:
            let json: JSONValue
            switch body() {
            case .failure(let r): return refuse(r)
            case .success(let j): json = j
            }
            guard case .object(let members) = json else {
                return refuse(.error(400, "Invalid data; an update must be a JSON object."))
            }
            var children: [(path: Path, node: Node)]
            do {
                var raw: [(Path, JSONValue)] = []
                for m in members {
                    do { raw.append((try Path(validating: m.key), m.value)) } catch { throw WriteError.path(error) }
                }
                children = try validated(raw, at: path)
            } catch let error as WriteError {
                return refuse(.error(400, error.description))
            } catch {
                return refuse(.error(400, "\(error)"))
            }
            guard let plan = allowedWrite(path, children, merge: true, as: request.principal) else {
                return refuse(denied)
            }
            apply(plan, weight: weight, into: &out)
            if silent { return refuse(RESTResponse(status: 204, body: "")) }
            // Firebase answers with the update as written.
            let written = children.map { ($0.path, data.child(at: path.appending($0.path))) }
            return (
                RESTReply {
                    let echoed = JSONValue.object(
                        written.map { JSONMember(key: $0.0.wireString, value: $0.1.plainJSON()) })
                    return RESTResponse(status: 200, body: echoed.serialized())
                }, out
            )

        case .post:
            let json: JSONValue
            switch body() {
            case .failure(let r): return refuse(r)
            case .success(let j): json = j
            }
            let key = pushIDs.next(now: now, using: &rng)
            let at = path.child(ChildKey(key))
            let node: Node
            do { node = try validated(json, at: at) } catch { return refuse(.error(400, error.description)) }
            guard let plan = allowedWrite(at, [(.root, node)], merge: false, as: request.principal) else {
                return refuse(denied)
            }
            apply(plan, weight: weight, into: &out)
            if silent { return refuse(RESTResponse(status: 204, body: "")) }
            let name = JSONValue.object([JSONMember(key: "name", value: .string(key))]).serialized()
            return refuse(RESTResponse(status: 200, body: name))
        }
    }

    /// A REST read's response: the query's view of `node`, its ETag, `shallow`, `format`.
    static func read(_ at: Node, _ query: QuerySpec, _ request: RESTRequest) -> RESTResponse {
        let node = queryView(at, query)
        let p = request.parameters
        var headers: [String: String] = [:]
        let tag = ServerCore.etag(node)
        if request.wantsETag { headers["ETag"] = tag }
        if let none = request.ifNoneMatch, none == tag { return RESTResponse(status: 304, headers: headers, body: "") }
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
        return RESTResponse(status: 200, headers: headers, body: json.serialized())
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
