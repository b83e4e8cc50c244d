import Hearth
@_spi(HearthInternals) import HearthWire

/// A REST request's method, target and headers, parsed and checked as soon as its head
/// arrives — before its body is read or its credential checked: the database path, the query
/// parameters, the credential and the conditional-request headers. With the body and the
/// principal it becomes a ``RESTRequest``.
///
/// Exact: the target must be ASCII (RFC 9112 §3.2: other bytes are percent-encoded), every `%`
/// must start two hex digits, and what the percent-decoding yields must be UTF-8; anything
/// else is answered 400, never repaired.
@_spi(HearthInternals) public struct RESTTarget: Sendable, Equatable {
    /// The method.
    public var method: RESTRequest.Method
    /// The database path (the URL path without `.json`, percent-decoded).
    public var path: Path
    /// The query parameters, decoded (`+` is a space); a repeated name keeps its last value.
    public var parameters: [String: String]
    /// The query a GET reads or listens with, from the parameters.
    public var query: QuerySpec
    /// The credential: `Authorization: Bearer …`, else the `auth` parameter.
    public var credential: String?
    /// `auth_variable_override`, the auth variable an admin credential asks to act as.
    public var authOverride: String?
    /// `X-Firebase-ETag: true`.
    public var wantsETag: Bool
    /// `if-match`.
    public var ifMatch: String?
    /// `if-none-match`.
    public var ifNoneMatch: String?
    /// A GET accepting `text/event-stream`: a listen, not a read.
    public var isStream: Bool
    /// The `ns` parameter: which database (``Databases``); `nil` for the default one.
    public var namespace: String?
    /// `/.settings/rules.json`: the namespace's security rules, read (GET) or replaced (PUT) by
    /// the admin, as Firebase's emulator offers them. ``path`` is the root.
    public var isRulesSettings = false
    /// The App Check token: the `X-Firebase-AppCheck` header, as Firebase's REST API takes it.
    public var appCheckToken: String? = nil

    /// What the adapter does with a request head.
    public enum Routing: Sendable, Equatable {
        /// Read the body (if any), resolve the credential, then ask the core.
        case request(RESTTarget)
        /// Answer at once (OPTIONS, an unknown method, a malformed target or query).
        case answer(RESTResponse)
    }

    /// The request this target makes with `body` on behalf of `principal`.
    public func request(body: String?, principal: Principal) -> RESTRequest {
        var request = RESTRequest(method: method, path: path, parameters: parameters, body: body, principal: principal)
        request.wantsETag = wantsETag
        request.ifMatch = ifMatch
        request.ifNoneMatch = ifNoneMatch
        return request
    }

    /// Parses a request head: `method` as sent (`GET`, …), `target` the request target
    /// (`/path.json?query`), `headers` in any case.
    public static func route(method: String, target: String, headers: [(name: String, value: String)]) -> Routing {
        func header(_ name: String) -> String? { headers.first { $0.name.lowercased() == name }?.value }
        let verb: RESTRequest.Method
        switch method {
        case "GET": verb = .get
        case "PUT": verb = .put
        case "PATCH": verb = .patch
        case "POST": verb = .post
        case "DELETE": verb = .delete
        case "OPTIONS": return .answer(RESTResponse(status: 204, body: ""))
        default: return .answer(.error(405, "Method not allowed"))
        }
        guard target.utf8.allSatisfy({ $0 < 0x80 }) else {
            return .answer(.error(400, "The request target must be ASCII: percent-encode other bytes as UTF-8"))
        }
        let parts = target.utf8.split(separator: UInt8(ascii: "?"), maxSplits: 1, omittingEmptySubsequences: false)
        guard let decodedPath = percentDecoded(parts[0], plusIsSpace: false) else {
            return .answer(.error(400, "The request path is not percent-encoded UTF-8"))
        }
        guard let parameters = parts.count > 1 ? parameters(parts[1]) : [:] else {
            return .answer(.error(400, "A query parameter is not percent-encoded UTF-8"))
        }
        let namespace = parameters["ns"]
        if let namespace, !Databases.isValidName(namespace) {
            return .answer(.error(400, Databases.Refusal.invalidName(namespace).description))
        }
        if decodedPath == "/.ws" || decodedPath == "/.ws/", header("upgrade") != nil {
            // The upgrade was refused (NetworkServer's shouldUpgrade) with a valid namespace
            // (checked above): the server serves as many as it may, or its store did not open.
            return .answer(
                .error(503, "The WebSocket upgrade was refused: the server cannot open this namespace's database now"))
        }
        let isRulesSettings = decodedPath == "/.settings/rules.json"
        if isRulesSettings, verb != .get, verb != .put {
            return .answer(.error(405, "The rules are read with GET and replaced with PUT"))
        }
        guard decodedPath.hasSuffix(".json") else {
            return .answer(.error(404, "Not found: REST paths end in .json, the WebSocket is at /.ws"))
        }
        let path: Path
        do { path = isRulesSettings ? .root : try Path(validating: String(decodedPath.dropLast(5))) } catch {
            return .answer(.error(400, "Invalid path: \(error)"))
        }
        var query = QuerySpec.default
        if verb == .get, !isRulesSettings {
            switch ServerCore.restQuery(parameters) {
            case .failure(let refusal): return .answer(refusal)
            case .success(let q): query = q
            }
        }
        var credential = parameters["auth"]
        if let authorization = header("authorization"), authorization.lowercased().hasPrefix("bearer ") {
            credential = String(authorization.dropFirst(7))
        }
        let accepts = headers.filter { $0.name.lowercased() == "accept" }.flatMap { $0.value.split(separator: ",") }
        return .request(
            RESTTarget(
                method: verb, path: path, parameters: parameters, query: query, credential: credential,
                authOverride: parameters["auth_variable_override"],
                wantsETag: header("x-firebase-etag")?.lowercased() == "true", ifMatch: header("if-match"),
                ifNoneMatch: header("if-none-match"),
                isStream: verb == .get && !isRulesSettings
                    && accepts.contains {
                        $0.drop(while: { $0 == " " }).lowercased().hasPrefix("text/event-stream")
                    }, namespace: namespace, isRulesSettings: isRulesSettings,
                appCheckToken: header("x-firebase-appcheck")))
    }

    /// The decoded query parameters of `query` (a repeated name keeps its last value), or `nil`
    /// when one is not percent-encoded UTF-8.
    static func parameters(_ query: Substring.UTF8View) -> [String: String]? {
        var parameters: [String: String] = [:]
        for pair in query.split(separator: UInt8(ascii: "&")) {
            let kv = pair.split(separator: UInt8(ascii: "="), maxSplits: 1, omittingEmptySubsequences: false)
            guard let key = percentDecoded(kv[0], plusIsSpace: true),
                let value = kv.count > 1 ? percentDecoded(kv[1], plusIsSpace: true) : ""
            else { return nil }
            parameters[key] = value
        }
        return parameters
    }

    /// The `ns` parameter of a request target (`/.ws?v=5&ns=NAME`): `nil` when there is none,
    /// and an invalid name (refused by ``Databases``) when the query is malformed.
    static func namespace(inTarget target: String) -> String? {
        let parts = target.utf8.split(separator: UInt8(ascii: "?"), maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count > 1 else { return nil }
        guard let parameters = parameters(parts[1]) else { return "%" }
        return parameters["ns"]
    }

    /// The percent-decoding of `bytes` (with `+` as a space in a query) if it is well formed and
    /// decodes to UTF-8.
    static func percentDecoded(_ bytes: Substring.UTF8View, plusIsSpace: Bool) -> String? {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var i = bytes.startIndex
        while i < bytes.endIndex {
            let byte = bytes[i]
            bytes.formIndex(after: &i)
            switch byte {
            case UInt8(ascii: "%"):
                guard i < bytes.endIndex, let high = hexValue(bytes[i]) else { return nil }
                bytes.formIndex(after: &i)
                guard i < bytes.endIndex, let low = hexValue(bytes[i]) else { return nil }
                bytes.formIndex(after: &i)
                out.append(high << 4 | low)
            case UInt8(ascii: "+") where plusIsSpace: out.append(UInt8(ascii: " "))
            default: out.append(byte)
            }
        }
        return String(validating: out, as: UTF8.self)
    }

    static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
