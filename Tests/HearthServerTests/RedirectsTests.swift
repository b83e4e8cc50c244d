@_spi(HearthInternals) import HearthServer
@_spi(HearthInternals) import HearthWire
import Testing

/// `hearth serve --redirect NAMESPACE=HOST[:PORT]`: the table a front instance keeps.
@Suite struct RedirectsTests {
    @Test func argumentsBuildTheTable() throws {
        let redirects = try Redirects(arguments: ["scores=10.0.0.2:9000", "chat=db-2.internal"])
        #expect(redirects.host(for: "scores") == "10.0.0.2:9000")
        #expect(redirects.host(for: "chat") == "db-2.internal")
        #expect(redirects.host(for: "other") == nil && redirects.host(for: nil) == nil)
        #expect(redirects.reset(for: "scores") == .reset(host: "10.0.0.2:9000"))
        #expect(redirects.reset(for: "scores")?.text == #"{"t":"c","d":{"t":"r","d":"10.0.0.2:9000"}}"#)
        #expect(Redirects().isEmpty && !redirects.isEmpty)
    }

    @Test func badArgumentsAreRefused() {
        #expect(throws: Redirects.Refusal.malformed("scores")) { try Redirects(arguments: ["scores"]) }
        #expect(throws: Redirects.Refusal.invalidName("Scores")) { try Redirects(arguments: ["Scores=h:1"]) }
        #expect(throws: Redirects.Refusal.invalidHost("h/1")) { try Redirects(arguments: ["scores=h/1"]) }
        #expect(throws: Redirects.Refusal.invalidHost("")) { try Redirects(arguments: ["scores="]) }
        #expect(throws: Redirects.Refusal.duplicate("a")) { try Redirects(arguments: ["a=h:1", "a=h:2"]) }
    }
}
