import Testing
@testable import Hearth

/// Problems found while testing the engine core whose fix lies outside `Hearth/Codec`,
/// `Hearth/Events` and `Hearth/State`. Each is recorded as a known issue: the test passes
/// while the problem exists and fails (asking to drop the wrapper) once it is fixed.
@Suite struct KnownIssuesTests {
    /// `QuerySpec` builders accept a bound value that carries a priority (e.g. a node taken
    /// from a snapshot), but `QuerySpec.json` writes it in export format
    /// (`{".value":1,".priority":2}`) and `QuerySpec(json:)` rejects that as an object bound.
    /// So `EventCodec` encodes a tracked query or pin that it then cannot decode: a log holding
    /// it would not replay. (The wire identifier's `sp` is an object too.) Fix belongs in
    /// HearthModel (drop the priority from bound values, or encode bounds without it).
    @Test func boundValueWithPriorityDoesNotSurviveTheEventCodec() throws {
        let q = try QuerySpec(orderBy: .value).startAt(Node(.number(1), priority: .number(2)))
        let event = StoreEvent.pinChanged(QueryLocation(path: "a", query: q), on: true)
        withKnownIssue("query bound carrying a priority is not JSON round-trippable") { () throws -> Void in
            let decoded = try EventCodec.decode(EventCodec.encode([event]))
            #expect(decoded == [event])
        }
    }
}
