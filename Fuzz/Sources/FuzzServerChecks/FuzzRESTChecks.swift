// The FuzzREST check: a REST request head — method, request target, headers — through `RESTTarget.route`,
// the parsing the adapter does before it reads a body or checks a credential (percent-decoding, the
// `.json` suffix, path validation, the query string, the query a GET reads with); and its seeds.
// Fuzz/Sources/FuzzServerChecks is the one source of these checks: Tests/HearthServerTests/FuzzChecks/
// holds a symbolic link to each of its files (Fuzz/sync-checks.sh makes them; FuzzRegressionTests fails
// when a copy differs or is missing), so the fuzzers and `swift test` run one and the same code.
import Hearth
@_spi(HearthInternals) import HearthServer
@_spi(HearthInternals) import HearthWire

extension FuzzServerChecks {
    static let methods = ["GET", "PUT", "PATCH", "POST", "DELETE", "OPTIONS", "HEAD", "CONNECT"]

    /// The input: fields separated by 0xFF — the method (one byte below 8 picks a common one), the
    /// request target, then header names and values in turns — read as NIO hands them over (bytes
    /// that are not UTF-8 repaired to U+FFFD, as its parser does).
    ///
    /// Checks: no trap; the same head always routes the same way; an answer is 204, 400, 404 or 405
    /// (or 503, for a WebSocket upgrade the server refused) with a JSON body; a routed request has
    /// an ASCII target and a valid path, and its path (or the rules endpoint) and parameters,
    /// percent-encoded again, route to the same request; its App Check token is its first
    /// `X-Firebase-AppCheck` header.
    static func rest(_ bytes: [UInt8]) {
        let parts = fields(bytes)
        let text = parts.map { String(decoding: $0, as: UTF8.self) }
        let method = parts[0].count == 1 && parts[0][0] < 8 ? methods[Int(parts[0][0])] : text[0]
        let target = text.count > 1 ? text[1] : "/.json"
        var headers: [(name: String, value: String)] = []
        var i = 2
        while i + 1 < text.count {
            headers.append((text[i], text[i + 1]))
            i += 2
        }
        let routing = RESTTarget.route(method: method, target: target, headers: headers)
        check(routing == RESTTarget.route(method: method, target: target, headers: headers), "routing is not a function")
        switch routing {
        case .answer(let response):
            let upgrade = headers.contains { $0.name.lowercased() == "upgrade" }
            check(
                [204, 400, 404, 405].contains(response.status) || (response.status == 503 && upgrade),
                "answered \(response.status): \(target)")
            if !response.body.isEmpty {
                check((try? JSONValue.parse(response.body)) != nil, "an answer's body is not JSON: \(response.body)")
            }
        case .request(let parsed):
            check(target.utf8.allSatisfy { $0 < 0x80 }, "a target that is not ASCII was routed: \(target)")
            check((try? Path(validating: parsed.path.wireString)) == parsed.path, "the path does not round-trip")
            let query = parsed.parameters.sorted { $0.key < $1.key }.map { encoded($0.key) + "=" + encoded($0.value) }
            let location =
                parsed.isRulesSettings ? "/.settings/rules" : "/" + encoded(parsed.path.wireString, keeping: "/")
            let again = location + ".json" + (query.isEmpty ? "" : "?" + query.joined(separator: "&"))
            guard case .request(let reparsed) = RESTTarget.route(method: method, target: again, headers: headers) else {
                return check(false, "\(target) routed, its re-encoding \(again) did not")
            }
            check(reparsed == parsed, "\(target) and its re-encoding \(again) route differently")
            let appCheck = headers.first { $0.name.lowercased() == "x-firebase-appcheck" }?.value
            check(parsed.appCheckToken == appCheck, "the App Check token is not the header's first value")
        }
    }

    /// `text` percent-encoded: every byte but letters, digits, `-._~` and `keeping`.
    static func encoded(_ text: String, keeping: String = "") -> String {
        let hex = Array("0123456789ABCDEF".utf8)
        var out: [UInt8] = []
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
                UInt8(ascii: "~"):
                out.append(byte)
            case _ where keeping.utf8.contains(byte):
                out.append(byte)
            default:
                out += [UInt8(ascii: "%"), hex[Int(byte >> 4)], hex[Int(byte & 0xF)]]
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    static func restSeeds() -> [(String, [UInt8])] {
        let heads: [(method: UInt8, target: String, headers: [String])] = [
            (0, "/.json", []),
            (0, "/users/ada.json?print=pretty&format=export", ["Authorization", "Bearer abc.def.ghi"]),
            (0, #"/scores.json?orderBy=%22%24value%22&limitToLast=4&startAt=3"#, []),
            (0, #"/scores.json?orderBy="height"&startAt=3,"k"&endBefore=9"#, ["X-Firebase-ETag", "true"]),
            (0, "/a.json?shallow=true&auth=tok", ["Accept", "text/event-stream"]),
            (0, #"/a.json?orderBy="$key"&equalTo="b"&shallow=true"#, []),
            (1, "/users/%C3%A9l%C3%A8ve.json?print=silent", ["if-match", "null_etag"]),
            (2, "/a/b.json?auth_variable_override=%7B%22uid%22%3A%22u%22%7D", []),
            (3, "/chat.json", ["Content-Type", "application/json"]),
            (4, "/a.json", ["if-none-match", "x"]),
            (5, "/anything", []),
            (6, "/a.json", []),
            (0, "/a%zz.json?x=%FF", []),
            (0, "/a.json?x=1+2&&y&=z", []),
            (0, "/bad[key].json", []),
            (1, "/a.json", ["X-Firebase-AppCheck", "app.check.token", "Authorization", "Bearer abc"]),
        ]
        return heads.enumerated().map { i, head in
            let fields = [[head.method], Array(head.target.utf8)] + head.headers.map { Array($0.utf8) }
            return ("head-\(i)", Array(fields.joined(separator: [0xFF])))
        }
    }
}
