import Testing
@testable import Hearth

/// Regression tests for problems found while testing the engine core whose fix lay outside
/// `Hearth/Codec`, `Hearth/Events` and `Hearth/State`.
@Suite struct RegressionTests {
    /// `QuerySpec` builders accepted a bound value that carries a priority (e.g. a node taken
    /// from a snapshot), but `QuerySpec.json` writes it in export format
    /// (`{".value":1,".priority":2}`) and `QuerySpec(json:)` rejects that as an object bound.
    /// So `EventCodec` encodes a tracked query or pin that it then cannot decode: a log holding
    /// it would not replay. (The wire identifier's `sp` is an object too.) Fix belongs in
    /// HearthModel: bound values now drop their priority.
    @Test func boundValueWithPriorityDoesNotSurviveTheEventCodec() throws {
        let q = try QuerySpec(orderBy: .value).startAt(Node(.number(1), priority: .number(2)))
        let event = StoreEvent.pinChanged(QueryLocation(path: "a", query: q), on: true)
        let decoded = try EventCodec.decode(EventCodec.encode([event]))
        #expect(decoded == [event])
        #expect(q.identifier == #"{"i":".value","sp":1}"#)
    }
}
