import Foundation
import Testing
@_spi(HearthInternals) @testable import Hearth
import HearthTesting

/// Random server writes, listens coming and going and listens completing, played on two
/// stores: the one under test, where queries go inactive, and a model where every query stays
/// active, so its keys follow every write (the tracked keys as they would be if a view
/// watched every tracked query). After every step: a query complete in the store under test
/// has exactly the model's keys — an offline open answers it as the model would — and the
/// state's invariants hold (``StoreState/keyWatchers`` among them).
@Suite struct InactiveQueryModelTests {
    static let chat: Path = "chat"
    static let pool = (0..<12).map { ChildKey(String(format: "k%02d", $0)) }

    static func queries() throws -> [QueryLocation] {
        let byKey = QuerySpec(orderBy: .key)
        return try [
            byKey.limitToLast(3), byKey.limitToFirst(2), byKey.endAt(.string("k06")).limitToLast(2),
            byKey.startAt(.string("k03")).limitToFirst(3), byKey.endAt(.string("k09")).limitToLast(4),
        ].map { QueryLocation(path: chat, query: $0) }
    }

    static func child(_ key: ChildKey) -> Path { chat.appending(Path(keys: [key])) }

    @Test(arguments: 1...UInt64(12))
    func completeQueriesKeepTheModelsKeys(seed: UInt64) throws {
        var rng = SeededRandom(seed: seed)
        let queries = try Self.queries()
        let testDir = TempDir(), modelDir = TempDir()
        var test = try Store.open(directory: testDir.path, options: options())
        var model = try Store.open(directory: modelDir.path, options: options())
        var data = Node.empty  // the server's data at chat
        func both(_ body: (inout StoreBatch) throws(StoreError) -> Void) throws {
            try test.commit(body)
            try model.commit(body)
        }
        try both { (b: inout StoreBatch) throws(StoreError) in
            for q in queries { try b.trackQuery(at: q, complete: true, active: false) }
        }
        for q in queries { try model.trackQuery(at: q, active: true) }
        for step in 0..<200 {
            let r = rng.int(0..<100)
            let key = rng.pick(Self.pool)
            var played = ""
            if r < 30 {
                let value = Node.number(Double(rng.int(0..<100)))
                try both { (b: inout StoreBatch) throws(StoreError) in
                    try b.applyServerOverwrite(value, at: Self.child(key))
                }
                data = data.updatingChild(key, value)
                played = "set \(key)"
            } else if r < 40 {
                try both { (b: inout StoreBatch) throws(StoreError) in
                    try b.applyServerOverwrite(.empty, at: Self.child(key))
                }
                data = data.updatingChild(key, .empty)
                played = "remove \(key)"
            } else if r < 50, data.hasChild(key) {
                // Deep writes only into children the server has (a listen brings whole children).
                let value = Node(children: [("deep", .number(Double(step)))])
                try both { (b: inout StoreBatch) throws(StoreError) in
                    try b.applyServerOverwrite(.number(Double(step)), at: Self.child(key).appending("deep"))
                }
                data = data.updatingChild(key, value)
                played = "deep \(key)"
            } else if r < 60 {
                let other = rng.pick(Self.pool)
                let children = [key, other].map { ChildUpdate(path: Path(keys: [$0]), node: .number(Double(step))) }
                try both { (b: inout StoreBatch) throws(StoreError) in try b.applyServerMerge(children, at: Self.chat) }
                for c in children { data = data.updatingChild(c.path.keys[0], c.node) }
                played = "merge \(key) \(other)"
            } else if r < 65 {
                let kept = Self.pool.filter { _ in rng.chance(0.5) }
                let node = Node(children: kept.map { ($0, Node.number(Double(step))) })
                try both { (b: inout StoreBatch) throws(StoreError) in try b.applyServerOverwrite(node, at: Self.chat) }
                data = node
                played = "overwrite"
            } else if r < 80 {
                let q = rng.pick(queries)
                let active = rng.chance(0.5)
                try test.trackQuery(at: q, active: active)
                played = "active \(active) \(q.query)"
            } else if r < 95 {
                let q = rng.pick(queries)
                try both { (b: inout StoreBatch) throws(StoreError) in try b.trackQuery(at: q, complete: true) }
                played = "complete \(q.query)"
            } else {
                try test.close()
                try model.close()
                test = try Store.open(directory: testDir.path, options: options())
                model = try Store.open(directory: modelDir.path, options: options())
                for q in queries { try model.trackQuery(at: q, active: true) }
                played = "reopen"
            }
            let testState = try test.state(), modelState = try model.state()
            #expect(testState.checkInvariants() == nil, "seed \(seed) step \(step) \(played)")
            #expect(testState.serverCache.child(at: Self.chat) == data, "seed \(seed) step \(step) \(played)")
            for q in queries {
                guard let t = testState.trackedQuery(at: q), t.complete else { continue }
                #expect(
                    t.keys == modelState.trackedQuery(at: q)?.keys, "seed \(seed) step \(step) \(played): \(q.query)")
            }
        }
        try test.close()
        try model.close()
    }
}
