// `hearth serve` as a real process deciding reads by query-based rules (`query.*` in `.read`)
// for WebSocket listens and gets and for REST queries, and warning `no_index` on a listen ordered
// by a child no `.indexOn` names. The client is token_client.py (a raw WebSocket and urllib);
// unsigned tokens are the emulator's, as the JS SDK's `mockUserToken` sends them.

import Foundation
import Hearth
import Testing

@Suite("hearth serve: query-based rules and .indexOn", .serialized)
struct ServeQueryRulesProcessTests {
    static let rules = #"""
        {
          "rules": {
            // A user may read only the baskets they own, and only by asking for exactly those.
            "baskets": {
              ".read": "auth.uid != null && query.orderByChild == 'owner' && query.equalTo == auth.uid",
              ".indexOn": "owner"
            },
            // Pages of at most two messages, in key order.
            "messages": { ".read": "query.orderByKey && query.limitToFirst <= 2" },
            "scores": { ".read": true, ".indexOn": ["score"] }
          }
        }
        """#

    static let data = #"""
        {
          "baskets": {"b1": {"owner": "alice", "n": 1}, "b2": {"owner": "bob", "n": 2},
                      "b3": {"owner": "alice", "n": 3}},
          "messages": {"m1": "a", "m2": "b", "m3": "c"},
          "scores": {"x": {"score": 3, "name": "x"}, "y": {"score": 1, "name": "y"}}
        }
        """#

    /// One listen (`q`) or get (`g`) at `path` with the wire query `parameters`, after `auth` with
    /// `credential` (nil: none): the answer's status, its `d`, and the data pushed before it.
    static func ask(
        _ server: ServeProcess, _ credential: String?, _ action: String, _ path: String, _ parameters: String
    ) throws -> (status: String?, answer: JSONValue?, data: JSONValue?) {
        let out = try TokenClient.run(["query", String(server.port), credential ?? "-", action, path, parameters])
        if let credential { #expect(out["auth"]?["s"]?.stringValue == "ok", "auth \(credential): \(out)") }
        let data = out["data"].flatMap { $0 == .null ? nil : $0 }
        return (out["answer"]?["s"]?.stringValue, out["answer"]?["d"], data)
    }

    /// Whether `messages` is the page of the first two.
    static func firstTwo(_ messages: JSONValue?) -> Bool {
        messages?["m1"] == .string("a") && messages?["m2"] == .string("b") && messages?["m3"] == nil
    }

    /// `hearth serve --emulator --rules` holding `data`.
    static func serving(_ body: (ServeProcess, _ alice: String) throws -> Void) throws {
        try ServeTokenTests.serving(emulator: true, rules: rules) { server, _ in
            let seeded = try TokenClient.rest(server.port, "PUT", "", body: data, bearer: "owner")
            #expect(seeded.status == 200, "\(seeded)")
            let alice = try TokenClient.unsigned(#"{"sub":"alice","exp":\#(ServeTokenTests.expiry)}"#)
            try body(server, alice)
        }
    }

    @Test(
        "WebSocket: a listen or get is allowed only when its query satisfies the .read rule, and answers that query",
        .enabled(if: Tool.binary != nil, Tool.missingMessage))
    func webSocket() throws {
        try Self.serving { server, alice in
            let own = #"{"i":"owner","sp":"alice","ep":"alice"}"#
            let listen = try Self.ask(server, alice, "q", "baskets", own)
            #expect(listen.status == "ok", "\(listen)")
            #expect(listen.data?["b1"]?["n"] == .number(1) && listen.data?["b3"] != nil && listen.data?["b2"] == nil)
            #expect(listen.answer?["w"] == nil, "owner is indexed: no warning")
            let get = try Self.ask(server, alice, "g", "baskets", own)
            #expect(get.status == "ok" && get.answer?["b3"]?["n"] == .number(3) && get.answer?["b2"] == nil, "\(get)")
            let others = #"{"i":"owner","sp":"bob","ep":"bob"}"#
            #expect(try Self.ask(server, alice, "q", "baskets", others).status == "permission_denied")
            #expect(try Self.ask(server, alice, "g", "baskets", others).status == "permission_denied")
            #expect(try Self.ask(server, alice, "q", "baskets", "{}").status == "permission_denied", "no query")
            #expect(try Self.ask(server, nil, "q", "baskets", own).status == "permission_denied", "no auth")

            let page = try Self.ask(server, nil, "q", "messages", #"{"i":".key","l":2,"vf":"l"}"#)
            #expect(page.status == "ok" && Self.firstTwo(page.data), "\(page)")
            let large = try Self.ask(server, nil, "g", "messages", #"{"i":".key","l":3,"vf":"l"}"#)
            #expect(large.status == "permission_denied", "\(large)")
            #expect(try Self.ask(server, nil, "g", "messages", "{}").status == "permission_denied", "no limit")
        }
    }

    @Test(
        "REST: orderBy/equalTo/limitToFirst are the query the .read rule sees; other queries are 401",
        .enabled(if: Tool.binary != nil, Tool.missingMessage))
    func rest() throws {
        try Self.serving { server, alice in
            let own = try TokenClient.rest(
                server.port, "GET", "baskets", bearer: alice,
                parameters: ["orderBy": #""owner""#, "equalTo": #""alice""#])
            #expect(own.status == 200, "\(own)")
            let baskets = try JSONValue.parse(own.body)
            #expect(baskets["b1"] != nil && baskets["b3"] != nil && baskets["b2"] == nil, "\(own)")
            let others = try TokenClient.rest(
                server.port, "GET", "baskets", bearer: alice,
                parameters: ["orderBy": #""owner""#, "equalTo": #""bob""#])
            #expect(others.status == 401, "\(others)")
            #expect(try TokenClient.rest(server.port, "GET", "baskets", bearer: alice).status == 401, "no query")

            let page = try TokenClient.rest(
                server.port, "GET", "messages", parameters: ["orderBy": #""$key""#, "limitToFirst": "2"])
            #expect(page.status == 200 && Self.firstTwo(try? JSONValue.parse(page.body)), "\(page)")
            let large = try TokenClient.rest(
                server.port, "GET", "messages", parameters: ["orderBy": #""$key""#, "limitToFirst": "3"])
            #expect(large.status == 401, "\(large)")
        }
    }

    @Test(
        "no_index: a listen ordered by a child .indexOn does not name gets w: [no_index] (with rules and without)",
        .enabled(if: Tool.binary != nil, Tool.missingMessage))
    func noIndex() throws {
        let noIndex = JSONValue.array([.string("no_index")])
        try Self.serving { server, _ in
            let unindexed = try Self.ask(server, nil, "q", "scores", #"{"i":"name","l":1,"vf":"l"}"#)
            #expect(unindexed.status == "ok" && unindexed.answer?["w"] == noIndex, "\(unindexed)")
            #expect(unindexed.data?["x"] != nil && unindexed.data?["y"] == nil, "still answered: \(unindexed)")
            let indexed = try Self.ask(server, nil, "q", "scores", #"{"i":"score","l":1,"vf":"l"}"#)
            #expect(indexed.status == "ok" && indexed.answer?["w"] == nil, "\(indexed)")
            #expect(indexed.data?["y"] != nil && indexed.data?["x"] == nil, "\(indexed)")
            let byKey = try Self.ask(server, nil, "q", "scores", #"{"i":".key","l":1,"vf":"l"}"#)
            #expect(byKey.status == "ok" && byKey.answer?["w"] == nil, "key order needs no index: \(byKey)")
        }
        try ServeTokenTests.serving(emulator: true) { server, _ in
            let unindexed = try Self.ask(server, nil, "q", "scores", #"{"i":"score"}"#)
            #expect(unindexed.status == "ok" && unindexed.answer?["w"] == noIndex, "no rules, no index: \(unindexed)")
        }
    }
}
