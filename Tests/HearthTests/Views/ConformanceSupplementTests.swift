import Testing
@_spi(HearthInternals) @testable import Hearth
import HearthModel

/// Cases in `syncPointSpec.json`'s format for what the JavaScript SDK's file leaves out: its
/// only `child_moved` cases are limited queries and the default query, so nothing there
/// checks a query that orders by a child, a deep child, the value or the key **without** a
/// limit — the queries whose events must follow their own order (moves, previous keys) even
/// though they load all data, and even beside the default query at the same location. The
/// expected events are the JavaScript SDK's (its `EventGenerator` on these steps), listed in
/// the order it raises them, which the runner checks here (``SyncPointSpecRunner`` at the root
/// and below `foo/bar/baz`, like the SDK's cases).
@Suite struct ConformanceSupplementTests {
    static let cases: [SyncPointSpecFile.Case] = {
        let text = #"""
            [
              {"name": "Unlimited orderByChild query moves a child whose indexed value changed",
               "steps": [
                 {"type": "listen", "path": "", "params": {"tag": 1, "orderBy": "score"}, "events": []},
                 {"type": "serverUpdate", "path": "", "data": {"a": {"score": 1}, "b": {"score": 2}, "c": {"score": 3}},
                  "events": [
                    {"path": "", "type": "child_added", "name": "a", "prevName": null, "data": {"score": 1}},
                    {"path": "", "type": "child_added", "name": "b", "prevName": "a", "data": {"score": 2}},
                    {"path": "", "type": "child_added", "name": "c", "prevName": "b", "data": {"score": 3}},
                    {"path": "", "type": "value", "data": {"a": {"score": 1}, "b": {"score": 2}, "c": {"score": 3}}}]},
                 {"type": "set", "path": "b/score", "data": 0,
                  "events": [
                    {"path": "", "type": "child_moved", "name": "b", "prevName": null, "data": {"score": 0}},
                    {"path": "", "type": "child_changed", "name": "b", "prevName": null, "data": {"score": 0}},
                    {"path": "", "type": "value", "data": {"a": {"score": 1}, "b": {"score": 0}, "c": {"score": 3}}}]},
                 {"type": "serverUpdate", "path": "c/score", "data": -1,
                  "events": [
                    {"path": "", "type": "child_moved", "name": "c", "prevName": null, "data": {"score": -1}},
                    {"path": "", "type": "child_changed", "name": "c", "prevName": null, "data": {"score": -1}},
                    {"path": "", "type": "value", "data": {"a": {"score": 1}, "b": {"score": 0}, "c": {"score": -1}}}]}
               ]},
              {"name": "Unlimited ordered query beside the default query: each keeps its own order",
               "steps": [
                 {"type": "listen", "path": "", "events": []},
                 {"type": "listen", "path": "", "params": {"tag": 1, "orderBy": "score"}, "events": []},
                 {"type": "serverUpdate", "path": "", "data": {"a": {"score": 2}, "b": {"score": 1}},
                  "events": [
                    {"path": "", "type": "child_added", "name": "a", "prevName": null, "data": {"score": 2}},
                    {"path": "", "type": "child_added", "name": "b", "prevName": "a", "data": {"score": 1}},
                    {"path": "", "type": "value", "data": {"a": {"score": 2}, "b": {"score": 1}}},
                    {"path": "", "type": "child_added", "name": "b", "prevName": null, "data": {"score": 1}},
                    {"path": "", "type": "child_added", "name": "a", "prevName": "b", "data": {"score": 2}},
                    {"path": "", "type": "value", "data": {"a": {"score": 2}, "b": {"score": 1}}}]},
                 {"type": "set", "path": "b/score", "data": 3,
                  "events": [
                    {"path": "", "type": "child_changed", "name": "b", "prevName": "a", "data": {"score": 3}},
                    {"path": "", "type": "value", "data": {"a": {"score": 2}, "b": {"score": 3}}},
                    {"path": "", "type": "child_moved", "name": "b", "prevName": "a", "data": {"score": 3}},
                    {"path": "", "type": "child_changed", "name": "b", "prevName": "a", "data": {"score": 3}},
                    {"path": "", "type": "value", "data": {"a": {"score": 2}, "b": {"score": 3}}}]}
               ]},
              {"name": "Unlimited orderByChild query on a deep path moves only for that path",
               "steps": [
                 {"type": "listen", "path": "", "params": {"tag": 1, "orderBy": "s/score"}, "events": []},
                 {"type": "serverUpdate", "path": "", "data": {"a": {"s": {"score": 1}}, "b": {"s": {"score": 2}}},
                  "events": [
                    {"path": "", "type": "child_added", "name": "a", "prevName": null, "data": {"s": {"score": 1}}},
                    {"path": "", "type": "child_added", "name": "b", "prevName": "a", "data": {"s": {"score": 2}}},
                    {"path": "", "type": "value", "data": {"a": {"s": {"score": 1}}, "b": {"s": {"score": 2}}}}]},
                 {"type": "set", "path": "a/s/score", "data": 5,
                  "events": [
                    {"path": "", "type": "child_moved", "name": "a", "prevName": "b", "data": {"s": {"score": 5}}},
                    {"path": "", "type": "child_changed", "name": "a", "prevName": "b", "data": {"s": {"score": 5}}},
                    {"path": "", "type": "value", "data": {"a": {"s": {"score": 5}}, "b": {"s": {"score": 2}}}}]},
                 {"type": "set", "path": "b/s/other", "data": true,
                  "events": [
                    {"path": "", "type": "child_changed", "name": "b", "prevName": null, "data": {"s": {"score": 2, "other": true}}},
                    {"path": "", "type": "value", "data": {"a": {"s": {"score": 5}}, "b": {"s": {"score": 2, "other": true}}}}]}
               ]},
              {"name": "Unlimited orderByValue query moves a child whose value changed",
               "steps": [
                 {"type": "listen", "path": "", "params": {"tag": 1, "orderByValue": true}, "events": []},
                 {"type": "serverUpdate", "path": "", "data": {"a": 1, "b": 2, "c": 3},
                  "events": [
                    {"path": "", "type": "child_added", "name": "a", "prevName": null, "data": 1},
                    {"path": "", "type": "child_added", "name": "b", "prevName": "a", "data": 2},
                    {"path": "", "type": "child_added", "name": "c", "prevName": "b", "data": 3},
                    {"path": "", "type": "value", "data": {"a": 1, "b": 2, "c": 3}}]},
                 {"type": "set", "path": "a", "data": 9,
                  "events": [
                    {"path": "", "type": "child_moved", "name": "a", "prevName": "c", "data": 9},
                    {"path": "", "type": "child_changed", "name": "a", "prevName": "c", "data": 9},
                    {"path": "", "type": "value", "data": {"a": 9, "b": 2, "c": 3}}]}
               ]},
              {"name": "Unlimited orderByKey query raises no child_moved for a priority change",
               "steps": [
                 {"type": "listen", "path": "", "params": {"tag": 1, "orderByKey": true}, "events": []},
                 {"type": "serverUpdate", "path": "",
                  "data": {"a": {".value": "a", ".priority": 2}, "b": {".value": "b", ".priority": 1}},
                  "events": [
                    {"path": "", "type": "child_added", "name": "a", "prevName": null, "data": {".value": "a", ".priority": 2}},
                    {"path": "", "type": "child_added", "name": "b", "prevName": "a", "data": {".value": "b", ".priority": 1}},
                    {"path": "", "type": "value", "data": {"a": {".value": "a", ".priority": 2}, "b": {".value": "b", ".priority": 1}}}]},
                 {"type": "set", "path": "b", "data": {".value": "b", ".priority": 3},
                  "events": [
                    {"path": "", "type": "child_changed", "name": "b", "prevName": "a", "data": {".value": "b", ".priority": 3}},
                    {"path": "", "type": "value", "data": {"a": {".value": "a", ".priority": 2}, "b": {".value": "b", ".priority": 3}}}]}
               ]}
            ]
            """#
        guard let json = try? JSONValue.parse(text), let array = json.arrayValue else {
            fatalError("the supplementary cases do not parse")
        }
        return array.compactMap { c in
            guard let name = c["name"]?.stringValue, let steps = c["steps"]?.arrayValue else { return nil }
            return SyncPointSpecFile.Case(name: name, steps: steps)
        }
    }()

    @Test(arguments: cases.map(\.name))
    func supplement(_ name: String) throws {
        let spec = try #require(Self.cases.first { $0.name == name })
        for base in SyncPointSpecFile.bases {
            for failure in SyncPointSpecRunner.run(spec, base: base, exactOrder: true) {
                Issue.record(Comment(rawValue: "[\(base.isRoot ? "root" : base.description)] \(failure)"))
            }
        }
    }
}
