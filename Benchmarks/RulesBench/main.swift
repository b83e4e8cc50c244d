// The cost of evaluating a 50-rule security-rules file per write,
// against the cost of the write itself (the in-memory tree update, and a Hearth store append).
//
//   swift build --package-path Benchmarks -c release --product RulesBench
//   Benchmarks/.build/release/RulesBench            # prints a table; about 30 s
//
// Every figure is ns per operation: the best and the median of 9 rounds after a warm-up round.
import Foundation
import Hearth
import HearthModel
import HearthRules

let rulesPath = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("rules50.json").path
let source = try String(contentsOfFile: rulesPath, encoding: .utf8)

/// A sink the optimizer cannot see through.
nonisolated(unsafe) var sink = 0

/// ns per operation of `body` run `iterations` times: the fastest and the median of `rounds`
/// rounds (after a warm-up round). On a shared machine the fastest round is the steadier figure.
struct Timing {
    var best: Double
    var median: Double
}

func measure(_ iterations: Int, rounds: Int = 9, _ body: (Int) throws -> Void) rethrows -> Timing {
    let clock = ContinuousClock()
    var samples: [Double] = []
    for round in 0...rounds {
        let start = clock.now
        for i in 0..<iterations { try body(i) }
        let elapsed = clock.now - start
        if round > 0 {  // round 0 warms up
            let ns = Double(elapsed.components.seconds) * 1e9 + Double(elapsed.components.attoseconds) / 1e9
            samples.append(ns / Double(iterations))
        }
    }
    samples.sort()
    return Timing(best: samples[0], median: samples[samples.count / 2])
}

func row(_ name: String, _ t: Timing) {
    let padded = name.padding(toLength: 62, withPad: " ", startingAt: 0)
    print("\(padded) \(String(format: "%10.0f", t.best)) \(String(format: "%10.0f", t.median))")
}

// MARK: - The rules and the data

let parseNs = try measure(200, rounds: 5) { _ in sink &+= try RulesSet.parse(source: source).ruleCount }
let rules = try RulesSet.parse(source: source)
precondition(rules.ruleCount == 50, "the benchmark's rules file must hold 50 rules, not \(rules.ruleCount)")

let now = 1_700_000_000_000.0
let userCount = 10_000, roomCount = 1_000, membersPerRoom = 10, messagesPerRoom = 50
func uid(_ i: Int) -> String { "u\(i)" }

func buildData() throws -> Node {
    var users: [(key: ChildKey, value: Node)] = []
    for i in 0..<userCount {
        users.append((ChildKey(uid(i)), try Node(jsonText: #"{"name":"User \#(i)","email":"u\#(i)@example.com","age":30,"createdAt":1600000000000}"#)))
    }
    var rooms: [(key: ChildKey, value: Node)] = []
    var messages: [(key: ChildKey, value: Node)] = []
    for r in 0..<roomCount {
        let members = (0..<membersPerRoom).map { (key: ChildKey(uid((r * 7 + $0) % userCount)), value: Node.bool(true)) }
        rooms.append((ChildKey("r\(r)"), Node(children: [
            ("name", .string("Room \(r)")), ("owner", .string(uid(r * 7 % userCount))),
            ("createdAt", .number(1_600_000_000_000)), ("members", Node(children: members)),
        ])))
        var list: [(key: ChildKey, value: Node)] = []
        for m in 0..<messagesPerRoom {
            list.append((ChildKey("m\(m)"), Node(children: [
                ("author", .string(uid((r * 7 + m % membersPerRoom) % userCount))),
                ("text", .string("message \(m) in room \(r)")), ("ts", .number(1_650_000_000_000 + Double(m))),
            ])))
        }
        messages.append((ChildKey("r\(r)"), Node(children: list)))
    }
    return Node(children: [
        ("users", Node(children: users)), ("rooms", Node(children: rooms)),
        ("messages", Node(children: messages)), ("admins", Node(children: [("u0", .bool(true))])),
    ])
}

let root = try buildData()

// MARK: - The writes

/// A member posts a message: .write reads root (room membership) and data; .validate runs at
/// the message and at each of its three children, plus `$other` checks.
func messageWrite(_ i: Int) -> (path: Path, value: Node, auth: RulesAuth) {
    let r = i % roomCount
    let author = uid((r * 7 + i % membersPerRoom) % userCount)
    let path = Path(keys: ["messages", ChildKey("r\(r)"), ChildKey("new\(i)")])
    let value = Node(children: [("author", .string(author)), ("text", .string("hello \(i)")), ("ts", .number(now))])
    return (path, value, RulesAuth(uid: author))
}

/// A user's presence: the guide's presence rule plus a three-rule validation.
func presenceWrite(_ i: Int) -> (path: Path, value: Node, auth: RulesAuth) {
    let u = uid(i % userCount)
    let value = Node(children: [("state", .string(i % 2 == 0 ? "online" : "offline")), ("lastChanged", .number(now))])
    return (Path(keys: ["status", ChildKey(u)]), value, RulesAuth(uid: u))
}

let messageInputs = (0..<4096).map(messageWrite)
let presenceInputs = (0..<4096).map(presenceWrite)
let newRoots = messageInputs.map { root.updating($0.path, with: $0.value) }
let presenceRoots = presenceInputs.map { root.updating($0.path, with: $0.value) }

// Sanity: every measured decision is an allow (a denial can stop early and look cheaper).
for (i, w) in messageInputs.enumerated() {
    let d = rules.canWrite(path: w.path, newRoot: newRoots[i], oldRoot: root, auth: w.auth, now: now)
    precondition(d.isAllowed, "\(d)")
}
for (i, w) in presenceInputs.enumerated() {
    let d = rules.canWrite(path: w.path, newRoot: presenceRoots[i], oldRoot: root, auth: w.auth, now: now)
    precondition(d.isAllowed, "\(d)")
}

// `RulesBench --profile` loops on the message write alone (for perf record).
if CommandLine.arguments.contains("--profile") {
    for i in 0..<2_000_000 {
        let w = messageInputs[i & 4095]
        sink &+= rules.canWrite(path: w.path, newRoot: newRoots[i & 4095], oldRoot: root, auth: w.auth, now: now).isAllowed ? 1 : 0
    }
    print(sink)
    exit(0)
}

print("RulesBench: \(rules.ruleCount) rules; data \(userCount) users, \(roomCount) rooms × \(membersPerRoom) members, \(roomCount * messagesPerRoom) messages")
print("ns per operation: best and median of 9 rounds (3 for the store appends)\n")
print("operation".padding(toLength: 62, withPad: " ", startingAt: 0) + "       best     median")
row("parse + type-check the 50-rule file (once, at startup)", parseNs)
print("")

row("rules: canWrite, message set (1 .write, 5 .validate)", measure(100_000) { i in
    let w = messageInputs[i & 4095]
    sink &+= rules.canWrite(path: w.path, newRoot: newRoots[i & 4095], oldRoot: root, auth: w.auth, now: now).isAllowed ? 1 : 0
})
row("rules: canWrite, presence set (1 .write, 3 .validate)", measure(100_000) { i in
    let w = presenceInputs[i & 4095]
    sink &+= rules.canWrite(path: w.path, newRoot: presenceRoots[i & 4095], oldRoot: root, auth: w.auth, now: now).isAllowed ? 1 : 0
})
row("rules: canUpdate, message + presence in one update", measure(50_000) { i in
    let m = messageInputs[i & 4095], p = presenceWrite(i & 4095)
    let writes = [(path: m.path, value: m.value), (path: Path(keys: ["status", ChildKey(m.auth.uid!)]), value: p.value)]
    sink &+= rules.canUpdate(writes: writes, oldRoot: root, auth: m.auth, now: now).isAllowed ? 1 : 0
})
row("rules: canRead, listen on a room's messages (root lookup)", measure(100_000) { i in
    let w = messageInputs[i & 4095]
    sink &+= rules.canRead(path: w.path.parent!, auth: w.auth, root: root, now: now).isAllowed ? 1 : 0
})
print("")

row("the write: root.updating(path, with: message) (in memory)", measure(100_000) { i in
    let w = messageInputs[i & 4095]
    sink &+= root.updating(w.path, with: w.value).childCount
})
row("the write: root.updating(path, with: presence) (in memory)", measure(100_000) { i in
    let w = presenceInputs[i & 4095]
    sink &+= root.updating(w.path, with: w.value).childCount
})

// A Hearth store append of the same message (what a server persisting its data pays).
for (name, durability, count) in [("buffered", Durability.buffered, 20_000), ("batched 10 ms", Durability.batched(), 20_000),
                                  ("full (fdatasync)", Durability.full, 300)] {
    let directory = NSTemporaryDirectory() + "rulesbench-\(getpid())-\(count)"
    try? FileManager.default.removeItem(atPath: directory)
    var options = Store.Options()
    options.durability = durability
    options.backgroundMaintenance = false
    let store = try Store.open(directory: directory, options: options)
    let ns = try measure(count, rounds: 3) { i in
        let w = messageInputs[i & 4095]
        _ = try store.applyServerOverwrite(w.value, at: w.path)
    }
    try store.close()
    try? FileManager.default.removeItem(atPath: directory)
    row("the write: Hearth Store.applyServerOverwrite, \(name)", ns)
}
print("\n(sink \(sink))")
