// `hearth serve` as a real process against hostile and privileged credentials: claims out of range
// over WebSocket `auth` and REST `Authorization: Bearer` (the server answers and goes on serving),
// `admin: true` as an ordinary claim under rules, and the admin credentials (`owner` only in emulator
// mode, the secret itself). The client is Tests/HearthToolTests/Python/token_client.py (Python's
// standard library: a raw WebSocket, urllib, HMAC-SHA256 for signed tokens).

import Foundation
import Hearth
import Testing

/// Runs token_client.py; every command prints one JSON object.
enum TokenClient {
    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent(
        "Python/token_client.py"
    ).path

    /// Runs one command; its WebSockets open the database `namespace` (`ns`).
    static func run(_ args: [String], namespace: String = "test") throws -> JSONValue {
        let run = try FirebaseAdmin.run(
            "/usr/bin/env", ["python3", script] + args, env: ["TOKEN_CLIENT_NS": namespace])
        guard run.status == 0, let value = try? JSONValue.parse(run.stdout) else { throw ServeError("\(args): \(run)") }
        return value
    }

    static func hs256(_ secret: String, _ claims: String) throws -> String {
        try run(["hs256", secret, claims])["token"]?.stringValue ?? ""
    }

    static func unsigned(_ claims: String) throws -> String {
        try run(["unsigned", claims])["token"]?.stringValue ?? ""
    }

    /// The statuses of a WebSocket `auth` and put (nil: no answer came, the connection dropped).
    struct Answers: Equatable {
        var auth: String?
        var put: String?
    }

    /// `auth` with `credential` on a new WebSocket, then a put of `value` at `path` if given.
    static func ws(
        _ port: Int, _ credential: String, put path: String? = nil, _ value: String = "1", namespace: String = "test"
    ) throws
        -> Answers
    {
        let out = try run(["ws", String(port), credential] + (path.map { [$0, value] } ?? []), namespace: namespace)
        return Answers(auth: out["auth"]?["s"]?.stringValue, put: out["put"]?["s"]?.stringValue)
    }

    /// A REST request: its status (nil when the connection was dropped) and body. It goes to
    /// the database `namespace` (the WebSockets' by default; `nil`: no `ns`, the default
    /// database) unless `parameters` name one.
    static func rest(
        _ port: Int, _ method: String, _ path: String, body: String? = nil, bearer: String? = nil,
        parameters: [String: String] = [:], namespace: String? = "test"
    ) throws -> (status: Int?, body: String) {
        var parameters = parameters
        if parameters["ns"] == nil, let namespace { parameters["ns"] = namespace }
        var args = ["rest", String(port), method, path] + (body.map { [$0] } ?? [])
        if let bearer { args += ["--bearer", bearer] }
        for (k, v) in parameters.sorted(by: { $0.key < $1.key }) { args += ["--param", "\(k)=\(v)"] }
        let out = try run(args)
        return (out["status"]?.doubleValue.map { Int($0) }, out["body"]?.stringValue ?? "\(out)")
    }
}

@Suite("hearth serve: tokens and the admin credential", .serialized)
struct ServeTokenTests {
    static let secret = "serve-token-tests-secret-0123456789abcdef+/="
    /// An hour from now: the server checks expiry against the real clock.
    static var expiry: Int { Int(Date().timeIntervalSince1970) + 3600 }

    /// Waits (10 s at most, a hang guard) for `file` to hold `text`, and returns its contents.
    static func wait(for text: String, in file: String) -> String {
        for _ in 0..<200 {
            if let s = try? String(contentsOfFile: file, encoding: .utf8), s.contains(text) { return s }
            usleep(50_000)
        }
        return (try? String(contentsOfFile: file, encoding: .utf8)) ?? ""
    }

    /// Runs `body` against `hearth serve` on a fresh directory: in emulator mode, or with the
    /// secret (and `rules` when given); every file is removed afterwards.
    static func serving(
        emulator: Bool = false, rules: String? = nil, stderr: Bool = false, arguments extra: [String] = [],
        _ body: (ServeProcess, String) throws -> Void
    ) throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("serve-tokens-\(UUID().uuidString)")
            .path
        defer {
            for suffix in ["", ".secret", ".rules", ".stderr"] {
                try? FileManager.default.removeItem(atPath: dir + suffix)
            }
        }
        var arguments = emulator ? ["--emulator"] : []
        if !emulator {
            try secret.write(toFile: dir + ".secret", atomically: true, encoding: .utf8)
            arguments += ["--secret-file", dir + ".secret"]
        }
        if let rules {
            try rules.write(toFile: dir + ".rules", atomically: true, encoding: .utf8)
            arguments += ["--rules", dir + ".rules"]
        }
        let server = try ServeProcess(
            directory: dir, arguments: arguments + extra, stderr: stderr ? dir + ".stderr" : nil)
        defer { server.stop() }
        try body(server, dir + ".stderr")
    }

    /// exp far out of range, over both entrances: an invalid token, and a server that still serves.
    static func refusesOutOfRange(_ server: ServeProcess, token: (String) throws -> String) throws {
        for exp in ["1e300", "1e16"] {
            let credential = try token(#"{"sub":"alice","exp":\#(exp)}"#)
            let ws = try TokenClient.ws(server.port, credential)
            #expect(ws.auth == "invalid_token", "exp \(exp) over WebSocket: \(ws)")
            let rest = try TokenClient.rest(server.port, "GET", "a", bearer: credential)
            #expect(rest.status == 401 && rest.body.contains("Could not parse auth token"), "exp \(exp): \(rest)")
            #expect(server.process.isRunning, "the server died on exp \(exp)")
        }
        let good = try token(#"{"sub":"alice","exp":\#(expiry)}"#)
        #expect(try TokenClient.ws(server.port, good).auth == "ok")
        #expect(try TokenClient.rest(server.port, "GET", "a", bearer: good).status == 200)
    }

    @Test(
        "emulator mode: an unsigned token with exp 1e300 or 1e16 is invalid_token / 401 and the server goes on serving",
        .enabled(if: Tool.binary != nil, Tool.missingMessage))
    func emulatorOutOfRange() throws {
        try Self.serving(emulator: true) { server, _ in try Self.refusesOutOfRange(server, token: TokenClient.unsigned)
        }
    }

    @Test(
        "--secret-file: a signed token with exp 1e300 or 1e16 is invalid_token / 401 and the server goes on serving",
        .enabled(if: Tool.binary != nil, Tool.missingMessage))
    func signedOutOfRange() throws {
        try Self.serving { server, _ in try Self.refusesOutOfRange(server) { try TokenClient.hs256(Self.secret, $0) } }
    }

    @Test(
        "rules: a signed admin: true token is held to the rules (auth.token.admin grants); Bearer owner is refused outside emulator mode; the secret is the admin and may act as a user",
        .enabled(if: Tool.binary != nil, Tool.missingMessage))
    func adminClaimAndCredentials() throws {
        let rules = """
            {"rules": {
              "users": {"$uid": {".read": "auth != null && auth.uid === $uid", ".write": "auth != null && auth.uid === $uid"}},
              "staff": {".read": "auth.token.admin === true", ".write": "auth.token.admin === true"}
            }}
            """
        try Self.serving(rules: rules) { server, _ in try Self.adminClaimAndCredentials(port: server.port) }
    }

    static func adminClaimAndCredentials(port: Int) throws {
        let mallory = try TokenClient.hs256(Self.secret, #"{"sub":"mallory","admin":true,"exp":\#(Self.expiry)}"#)

        // admin: true is mallory's claim: another user's data is refused, the staff rule grants.
        let denied = try TokenClient.rest(port, "PUT", "users/bob", body: #"{"by":"mallory"}"#, bearer: mallory)
        #expect(denied.status == 401 && denied.body.contains("Permission denied"), "\(denied)")
        #expect(try TokenClient.ws(port, mallory, put: "/users/bob") == .init(auth: "ok", put: "permission_denied"))
        #expect(try TokenClient.rest(port, "PUT", "staff/notice", body: #""hi""#, bearer: mallory).status == 200)
        #expect(try TokenClient.ws(port, mallory, put: "/staff/ws") == .init(auth: "ok", put: "ok"))

        // `owner` is the admin only in emulator mode.
        let owner = try TokenClient.rest(port, "PUT", "users/bob", body: #"{"by":"owner"}"#, bearer: "owner")
        #expect(owner.status == 401 && owner.body.contains("Could not parse auth token"), "\(owner)")
        #expect(try TokenClient.ws(port, "owner").auth == "invalid_token")

        // The secret is the admin: Bearer, ?auth= (percent-encoded: it holds + / =) and WebSocket.
        #expect(
            try TokenClient.rest(port, "PUT", "users/bob", body: #"{"by":"admin"}"#, bearer: Self.secret).status == 200)
        let read = try TokenClient.rest(port, "GET", "users/bob", parameters: ["auth": Self.secret])
        #expect(
            read.status == 200 && (try? JSONValue.parse(read.body)) == (try? JSONValue.parse(#"{"by":"admin"}"#)),
            "\(read)")
        #expect(try TokenClient.ws(port, Self.secret, put: "/users/carol") == .init(auth: "ok", put: "ok"))
        #expect(try TokenClient.rest(port, "PUT", "users/dave", body: "1", bearer: Self.secret + "x").status == 401)

        // The admin acting as bob with auth_variable_override is held to the rules as bob.
        let asBob = ["auth_variable_override": #"{"uid":"bob"}"#]
        #expect(
            try TokenClient.rest(port, "PUT", "users/bob/n", body: "2", bearer: Self.secret, parameters: asBob).status
                == 200)
        let asBobElsewhere = try TokenClient.rest(
            port, "PUT", "users/alice", body: "1", bearer: Self.secret, parameters: asBob)
        #expect(asBobElsewhere.status == 401 && asBobElsewhere.body.contains("Permission denied"))
        let all = try TokenClient.rest(port, "GET", "", bearer: Self.secret)
        #expect(
            (try? JSONValue.parse(all.body))
                == (try? JSONValue.parse(
                    #"{"staff":{"notice":"hi","ws":1},"users":{"bob":{"by":"admin","n":2},"carol":1}}"#)),
            "\(all)")
    }

    @Test(
        "emulator mode says at startup, in one line of its own, that it trusts unsigned tokens and owner; the listening line is unchanged",
        .enabled(if: Tool.binary != nil, Tool.missingMessage))
    func emulatorWarning() throws {
        for emulator in [true, false] {
            var text = "", port = 0
            try Self.serving(emulator: emulator, stderr: true) { server, stderr in
                text = Self.wait(for: "listening on", in: stderr)
                port = server.port
            }
            let lines = text.split(separator: "\n").map(String.init)
            let listening =
                "hearth serve: listening on 127.0.0.1:\(port), database URL http://127.0.0.1:\(port)?ns=default"
                + (emulator ? ", emulator mode" : "")
            #expect(lines.contains(listening), "\(lines)")
            let warnings = lines.filter { $0.contains("local development only") }
            #expect(warnings.count == (emulator ? 1 : 0), "\(lines)")
            if emulator {
                #expect(warnings[0].contains("unsigned tokens") && warnings[0].contains("owner"), "\(warnings)")
            }
        }
    }

    @Test(
        "--rules-step-budget: a write whose validation needs more steps than the budget is denied, one within it allowed; the default takes both",
        .enabled(if: Tool.binary != nil, Tool.missingMessage))
    func rulesStepBudget() throws {
        let rules = #"{"rules": {".read": true, ".write": true, "items": {"$i": {".validate": "newData.isNumber()"}}}}"#
        let many = "{" + (0..<200).map { "\"i\($0)\": \($0)" }.joined(separator: ",") + "}"
        for budget in [nil, 2_000] as [Int?] {
            let extra = budget.map { ["--rules-step-budget", String($0)] } ?? []
            try Self.serving(emulator: true, rules: rules, arguments: extra) { server, _ in
                let one = try TokenClient.rest(server.port, "PUT", "items/a", body: "1")
                #expect(one.status == 200, "budget \(String(describing: budget)): \(one)")
                let all = try TokenClient.rest(server.port, "PUT", "items", body: many)
                #expect(all.status == (budget == nil ? 200 : 401), "budget \(String(describing: budget)): \(all)")
            }
        }
    }

    @Test(
        "emulator mode: the JS SDK's mockUserToken (unsigned, iat 0, exp 3600: 1970) is alice over WebSocket auth, Bearer and ?auth=, and rules see her uid; signed with the secret, the same claims are expired",
        .enabled(if: Tool.binary != nil, Tool.missingMessage))
    func emulatorMockUserToken() throws {
        // createMockUserToken({sub: "alice"})'s claims (connectDatabaseEmulator's mockUserToken).
        func claims(_ uid: String) -> String {
            #"{"iss":"https://securetoken.google.com/demo-project","aud":"demo-project","iat":0,"exp":3600,"auth_time":0,"sub":"\#(uid)","user_id":"\#(uid)","firebase":{"sign_in_provider":"custom","identities":{}}}"#
        }
        let rules = #"{"rules": {"notes": {".read": "auth.uid === 'alice'", ".write": "auth.uid === 'alice'"}}}"#
        let alice = try TokenClient.unsigned(claims("alice"))
        try Self.serving(emulator: true, rules: rules) { server, _ in
            #expect(try TokenClient.ws(server.port, alice, put: "notes/ws") == .init(auth: "ok", put: "ok"))
            let bob = try TokenClient.unsigned(claims("bob"))
            #expect(
                try TokenClient.ws(server.port, bob, put: "notes/ws") == .init(auth: "ok", put: "permission_denied"))
            let put = try TokenClient.rest(server.port, "PUT", "notes/rest", body: "2", bearer: alice)
            #expect(put.status == 200, "\(put)")
            let read = try TokenClient.rest(server.port, "GET", "notes", parameters: ["auth": alice])
            #expect(
                read.status == 200
                    && (try? JSONValue.parse(read.body)) == (try? JSONValue.parse(#"{"rest":2,"ws":1}"#)),
                "\(read)")
            #expect(try TokenClient.rest(server.port, "GET", "notes").status == 401)
            #expect(try TokenClient.rest(server.port, "GET", "notes", bearer: bob).status == 401)
        }
        // With the secret: the unsigned token is refused, and signed its 1970 times are expired.
        try Self.serving(rules: rules) { server, _ in
            #expect(try TokenClient.ws(server.port, alice).auth == "invalid_token")
            let signed = try TokenClient.hs256(Self.secret, claims("alice"))
            #expect(try TokenClient.ws(server.port, signed).auth == "expired_token")
            let rest = try TokenClient.rest(server.port, "GET", "notes", bearer: signed)
            #expect(rest.status == 401 && rest.body.lowercased().contains("expired"), "\(rest)")
        }
    }
}
