import Hearth
@_spi(HearthInternals) @testable import HearthServer
@_spi(HearthInternals) import HearthWire
import Testing

/// Keys that differ only in Unicode normalization (`é` U+00E9 and `e` U+0301) are two children
/// on the server, as in Firebase: kept, served over REST and to listens, merged and journaled
/// apart.
@Suite struct ExactKeyServerTests {
    /// Both keys as written.
    static let both = #"{"\u00e9":1,"e\u0301":2}"#
    /// Both keys as served: in key order (UTF-16 code units, `e` before `é`).
    static let served = json(#"{"e\u0301":2,"\u00e9":1}"#)

    @Test("REST: a put keeps both keys and a get serves both; a patch updates each on its own")
    func rest() throws {
        var h = CoreHarness()
        #expect(h.rest(.put, "k", body: Self.both).status == 200)
        #expect(h.core.data.child(at: "k").childCount == 2)
        let get = h.rest(.get, "k")
        #expect(get.status == 200)
        #expect(try JSONValue.parse(get.body) == Self.served)
        #expect(h.rest(.patch, "k", body: #"{"e\u0301":3}"#).status == 200)
        #expect(try JSONValue.parse(h.rest(.get, "k").body) == json(#"{"e\u0301":3,"\u00e9":1}"#))
        let shallow = h.rest(.get, "k", ["shallow": "true"])
        #expect(try JSONValue.parse(shallow.body) == json(#"{"e\u0301":true,"\u00e9":true}"#))
    }

    @Test("a listen gets both keys; a merge of both pushes both and writes both")
    func listen() {
        var h = CoreHarness()
        _ = h.connect(1)
        #expect(response(h.send(1, 1, .put(path: "k", data: json(Self.both), hash: nil)), 1)?.status == "ok")
        _ = h.connect(2)
        let listened = h.send(2, 1, .listen(path: "k", query: .default, tag: nil, hash: ""))
        guard case let .set(_, data, _) = listened.first?.1 else { Issue.record("expected d: \(listened)"); return }
        #expect(data == Self.served)
        let merged = h.send(
            1, 2, .merge(path: "m", data: [(Path("\u{E9}"), .number(1)), (Path("e\u{301}"), .number(2))]))
        #expect(response(merged, 2)?.status == "ok")
        #expect(h.core.data.child(at: "m") == node(Self.both))
    }

    @Test("an onDisconnect merge of both keys runs both, and its journal record keeps both")
    func onDisconnect() throws {
        var h = CoreHarness()
        _ = h.connect(1)
        let children: [(Path, JSONValue)] = [(Path("\u{E9}"), .number(1)), (Path("e\u{301}"), .number(2))]
        #expect(response(h.send(1, 1, .onDisconnectMerge(path: "gone", data: children)), 1)?.status == "ok")
        _ = h.disconnect(1)
        #expect(h.core.data.child(at: "gone") == node(Self.both))

        let op = HearthServer.OnDisconnectOperation(
            path: "/", action: .merge([.init(path: "\u{E9}", value: 1), .init(path: "e\u{301}", value: 2)]),
            principal: .admin, bytes: 10)
        let (payload, type) = OnDisconnectCodec.encode(.registered(session: 1, op))
        #expect(try OnDisconnectCodec.decode(payload, type: type) == .registered(session: 1, op))
    }
}
