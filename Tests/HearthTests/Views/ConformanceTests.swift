import Foundation
import Testing
@_spi(HearthInternals) @testable import Hearth
import HearthModel

/// Runs the Firebase JavaScript SDK's view-engine conformance cases (`syncPointSpec.json`,
/// 112 cases) against ``SyncTree``, as the SDK's own runner (`syncpoint-util.ts`) does: every
/// case at the root and again with every path under `foo/bar/baz`; tags restart at 1 per run;
/// write ids 0, 1, 2… in step order; `listen`/`unlisten` events must match exactly and in
/// order; events of the other steps must match as a set per location, locations in the
/// expected order, each listen's events in the order removed < added < moved < changed <
/// value. Snapshots compare by node hash. (This runner matches every event of a group; the
/// SDK's only checks the last event of each group against the expectations.) Previous keys
/// are checked for every event but `child_removed` and `value`, which have none in Firebase
/// (seven `child_removed` expectations in the file state one; the SDK's runner ignores them too).
@Suite struct ConformanceTests {
    /// Cases that do not pass, with the reason. Empty: every run passes.
    static let knownIssues: [String: String] = [:]

    @Test(
        .enabled(
            if: SyncPointSpecFile.cases != nil,
            "syncPointSpec.json not found at \(SyncPointSpecFile.location.path) — conformance cases skipped"),
        arguments: SyncPointSpecFile.caseNames)
    func syncPointSpec(_ name: String) throws {
        guard let spec = SyncPointSpecFile.cases?.first(where: { $0.name == name }) else {
            Issue.record("no case named \(name)")
            return
        }
        let check = {
            for base in SyncPointSpecFile.bases {
                for failure in SyncPointSpecRunner.run(spec, base: base) {
                    Issue.record(Comment(rawValue: "[\(base.isRoot ? "root" : base.description)] \(failure)"))
                }
            }
        }
        if let reason = Self.knownIssues[name] {
            withKnownIssue(Comment(rawValue: reason)) { check() }
        } else {
            check()
        }
    }

    @Test(
        .enabled(
            if: SyncPointSpecFile.cases != nil,
            "syncPointSpec.json not found at \(SyncPointSpecFile.location.path) — conformance cases skipped"))
    func summary() throws {
        let cases = SyncPointSpecFile.cases ?? []
        var passed = 0
        var failed: [String] = []
        for spec in cases {
            for base in SyncPointSpecFile.bases {
                let failures = SyncPointSpecRunner.run(spec, base: base)
                if failures.isEmpty {
                    passed += 1
                } else {
                    failed.append("\(spec.name) [\(base.isRoot ? "root" : base.description)]: \(failures[0])")
                }
            }
        }
        print(
            "syncPointSpec: \(passed) of \(cases.count * SyncPointSpecFile.bases.count) runs passed, \(failed.count) failed"
        )
        for f in failed { print("  FAILED \(f)") }
        let unexpected = failed.filter { f in !Self.knownIssues.keys.contains { f.hasPrefix($0 + " [") } }
        #expect(unexpected.isEmpty, "unexpected failures: \(unexpected.count)")
        #expect(cases.count == 112)
    }
}

/// The spec file and its cases.
enum SyncPointSpecFile {
    /// `../shared/conformance/syncPointSpec.json` relative to the package root.
    static let location: URL = {
        // This file is <root>/Tests/HearthTests/Views/ConformanceTests.swift.
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
            .deletingLastPathComponent()
        return root.deletingLastPathComponent().appendingPathComponent("shared/conformance/syncPointSpec.json")
    }()

    /// The locations each case runs at.
    static let bases: [Path] = [.root, "foo/bar/baz"]

    struct Case: Sendable {
        let name: String
        let steps: [JSONValue]
    }

    /// The cases, or nil when the file is absent or unreadable.
    static let cases: [Case]? = {
        guard let data = try? Data(contentsOf: location), let text = String(data: data, encoding: .utf8),
            let json = try? JSONValue.parse(text), let array = json.arrayValue
        else { return nil }
        return array.compactMap { c in
            guard let name = c["name"]?.stringValue, let steps = c["steps"]?.arrayValue else { return nil }
            return Case(name: name, steps: steps)
        }
    }()

    static let caseNames: [String] = cases?.map(\.name) ?? []
}

/// Runs one case at one base location; returns the failures (empty when it passes).
enum SyncPointSpecRunner {
    struct Failure: Error, CustomStringConvertible {
        let description: String
        init(_ d: String) { description = d }
    }

    /// `exactOrder`: the expected events of every step are in the order Firebase raises them
    /// (true of ``ConformanceSupplementTests``' cases; the SDK's file lists some groups in
    /// another order — "Server updates priority" has `child_changed` before `child_moved` —
    /// so its cases are matched as sets, as the SDK's runner does).
    static func run(_ spec: SyncPointSpecFile.Case, base: Path, exactOrder: Bool = false) -> [String] {
        let tree = SyncTree()
        tree.resetTags()
        var writeID: Int64 = 0
        var registrations: [String: RegistrationID] = [:]
        var nextRegistration = 1
        var failures: [String] = []
        for (i, step) in spec.steps.enumerated() {
            let type = step["type"]?.stringValue ?? "?"
            do {
                let path = try stepPath(step, base: base)
                switch type {
                case "listen":
                    let query = try parseQuery(step["params"])
                    let registration: RegistrationID
                    if let callback = step["callbackId"].map(callbackKey) {
                        if let existing = registrations[callback] {
                            registration = existing
                        } else {
                            registration = RegistrationID(nextRegistration)
                            nextRegistration += 1
                            registrations[callback] = registration
                        }
                    } else {
                        registration = RegistrationID(nextRegistration)
                        nextRegistration += 1
                    }
                    let events = tree.addListener(at: path, query: query, registration: registration)
                    try exactMatch(expected: step["events"]?.arrayValue ?? [], actual: events)
                    // Queries that load all data get no tag (the spec gives them one anyway).
                    if let tag = step["params"]?["tag"]?.doubleValue, !query.loadsAllData,
                        tree.tag(at: path, query: query) != Int(tag)
                    {
                        throw Failure(
                            "tag \(tree.tag(at: path, query: query).map(String.init) ?? "nil"), expected \(Int(tag))")
                    }
                case "unlisten":
                    guard let callback = step["callbackId"].map(callbackKey), let registration = registrations[callback]
                    else {
                        throw Failure("unlisten without a known callbackId")
                    }
                    let events = tree.removeListener(at: path, query: .default, registration: registration)
                    try exactMatch(expected: step["events"]?.arrayValue ?? [], actual: events)
                case "serverUpdate":
                    let node = try Node(json: step["data"] ?? .null)
                    let events: [ViewEvent]
                    if let tag = step["tag"]?.doubleValue {
                        events = tree.applyTaggedServerOverwrite(node, at: path, tag: Int(tag))
                    } else {
                        events = tree.applyServerOverwrite(node, at: path)
                    }
                    try setMatch(
                        expected: step["events"]?.arrayValue ?? [], actual: events, base: base, exactOrder: exactOrder)
                case "serverMerge":
                    let children = try mergeChildren(step["data"])
                    let events: [ViewEvent]
                    if let tag = step["tag"]?.doubleValue {
                        events = tree.applyTaggedServerMerge(children, at: path, tag: Int(tag))
                    } else {
                        events = tree.applyServerMerge(children, at: path)
                    }
                    try setMatch(
                        expected: step["events"]?.arrayValue ?? [], actual: events, base: base, exactOrder: exactOrder)
                case "set":
                    let node = try Node(json: step["data"] ?? .null)
                    let visible = step["visible"]?.boolValue ?? true
                    let events = tree.applyUserOverwrite(node, at: path, writeID: writeID, visible: visible)
                    writeID += 1
                    try setMatch(
                        expected: step["events"]?.arrayValue ?? [], actual: events, base: base, exactOrder: exactOrder)
                case "update":
                    let children = try mergeChildren(step["data"])
                    let events = tree.applyUserMerge(children, at: path, writeID: writeID)
                    writeID += 1
                    try setMatch(
                        expected: step["events"]?.arrayValue ?? [], actual: events, base: base, exactOrder: exactOrder)
                case "ackUserWrite":
                    guard let id = step["writeId"]?.doubleValue else { throw Failure("ackUserWrite without writeId") }
                    let events = tree.ackUserWrite(Int64(id), revert: step["revert"]?.boolValue ?? false)
                    try setMatch(
                        expected: step["events"]?.arrayValue ?? [], actual: events, base: base, exactOrder: exactOrder)
                case "suppressWarning":
                    break
                default:
                    throw Failure("unknown step type \(type)")
                }
            } catch {
                failures.append("step \(i) (\(type)\(step[".comment"]?.stringValue.map { ": " + $0 } ?? "")): \(error)")
                return failures
            }
        }
        return failures
    }

    private static func callbackKey(_ json: JSONValue) -> String { json.serialized() }

    private static func stepPath(_ step: JSONValue, base: Path) throws -> Path {
        guard let s = step["path"]?.stringValue else { return base }
        return base.appending(try Path(validating: s))
    }

    private static func parseQuery(_ params: JSONValue?) throws -> QuerySpec {
        guard let params, let members = params.objectMembers else { return .default }
        if params["tag"] == nil { throw Failure("non-default queries must have a tag") }
        var index = QueryIndex.priority
        for m in members {
            switch m.key {
            case "orderBy":
                guard let s = m.value.stringValue else { throw Failure("orderBy must be a string") }
                index = .child(try QuerySpec.parseChildPath(s))
            case "orderByKey": index = .key
            case "orderByPriority": index = .priority
            case "orderByValue": index = .value
            default: break
            }
        }
        var q = QuerySpec(orderBy: index)
        func bound(_ v: JSONValue) throws -> (Node, ChildKey?) {
            let value = try Node(json: v["index"] ?? .null)
            let name = v["name"]?.stringValue.map { ChildKey($0) }
            return (value, name)
        }
        for m in members {
            switch m.key {
            case "startAt": let (v, k) = try bound(m.value); q = try q.startAt(v, key: k)
            case "startAfter": let (v, k) = try bound(m.value); q = try q.startAfter(v, key: k)
            case "endAt": let (v, k) = try bound(m.value); q = try q.endAt(v, key: k)
            case "endBefore": let (v, k) = try bound(m.value); q = try q.endBefore(v, key: k)
            case "equalTo": let (v, k) = try bound(m.value); q = try q.equalTo(v, key: k)
            case "limitToFirst", "limitToLast", "tag", "orderBy", "orderByKey", "orderByPriority", "orderByValue": break
            default: throw Failure("unsupported query parameter \(m.key)")
            }
        }
        for m in members {
            guard let n = m.value.doubleValue else { continue }
            if m.key == "limitToFirst" { q = try q.limitToFirst(Int(n)) }
            if m.key == "limitToLast" { q = try q.limitToLast(Int(n)) }
        }
        return q
    }

    private static func mergeChildren(_ data: JSONValue?) throws -> [ChildUpdate] {
        guard let members = data?.objectMembers else { throw Failure("merge data must be an object") }
        return try members.map { ChildUpdate(path: try Path(validating: $0.key), node: try Node(json: $0.value)) }
    }

    private static func describe(_ e: JSONValue) -> String { e.serialized() }

    /// Whether `actual` matches the expected event (type, name, prevName, hash).
    private static func matches(_ expected: JSONValue, _ actual: ViewEvent, checkPrevName: Bool) -> Bool {
        guard expected["type"]?.stringValue == actual.kind.rawValue else { return false }
        if actual.kind != .value {
            guard expected["name"]?.stringValue == actual.childKey?.string else { return false }
            if checkPrevName && actual.kind != .childRemoved {
                guard expected["prevName"]?.stringValue == actual.previousChildKey?.string else { return false }
            }
        }
        guard let node = try? Node(json: expected["data"] ?? .null) else { return false }
        return node.hash == actual.node.hash
    }

    private static func exactMatch(expected: [JSONValue], actual: [ViewEvent]) throws {
        guard expected.count == actual.count else {
            throw Failure("expected \(expected.count) events, got \(actual.count): \(actual)")
        }
        for (e, a) in zip(expected, actual) where !matches(e, a, checkPrevName: true) {
            throw Failure("expected \(describe(e)), got \(a)")
        }
    }

    private static let order: [ViewEvent.Kind] = [.childRemoved, .childAdded, .childMoved, .childChanged, .value]

    private static func setMatch(expected: [JSONValue], actual: [ViewEvent], base: Path, exactOrder: Bool) throws {
        guard expected.count == actual.count else {
            throw Failure("expected \(expected.count) events, got \(actual.count): \(actual)")
        }
        var start = 0
        while start < expected.count {
            // The expected events for one location are consecutive.
            let path = base.appending(try Path(validating: expected[start]["path"]?.stringValue ?? ""))
            var end = start + 1
            while end < expected.count,
                base.appending(try Path(validating: expected[end]["path"]?.stringValue ?? "")) == path
            {
                end += 1
            }
            let group = Array(actual[start..<end])
            for a in group where a.path != path {
                throw Failure("event for \(a.path) where events for \(path) were expected: \(a)")
            }
            // Each listen's events respect the type order.
            var last: [String: Int] = [:]
            for a in group {
                let listen = "\(a.path)|\(a.query.identifier)|\(a.registration)"
                let rank = order.firstIndex(of: a.kind) ?? 0
                if let previous = last[listen], previous > rank {
                    throw Failure("\(a.kind.rawValue) after \(order[previous].rawValue) for \(listen)")
                }
                last[listen] = rank
            }
            if exactOrder {
                for (e, a) in zip(expected[start..<end], group) where !matches(e, a, checkPrevName: true) {
                    throw Failure("out of order: expected \(describe(e)) here, got \(a)")
                }
            }
            var remaining = Array(expected[start..<end])
            for a in group {
                guard let i = remaining.firstIndex(where: { matches($0, a, checkPrevName: true) }) else {
                    throw Failure("unexpected event \(a); expected one of \(remaining.map(describe))")
                }
                remaining.remove(at: i)
            }
            start = end
        }
    }
}
