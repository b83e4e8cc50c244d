// A port of firebase-android-sdk
// `firebase-database/src/test/java/com/google/firebase/database/core/persistence/RandomPersistenceTest.java`
// and of the generator it drives, `src/testUtil/.../core/RandomOperationGenerator.java` (at
// a089298e), run against Hearth's store.
//
// The SDK test plays random operations — listens, server overwrites and merges, listen
// responses and completions, user overwrites and merges, acks and reverts — through a
// `SyncTree` with a persistence manager over a mock storage engine, while the generator keeps
// the server's true state. After every operation it checks that each completed listen is a
// complete tracked query and that, for a query that loads all data, the persisted node at its
// path equals the server's.
//
// Here the same generator (same probabilities and shapes, driven by `SeededRandom` with fixed
// seeds) feeds the calls a sync client makes on Hearth, each one commit:
//
// | SDK (`SyncTree` → `PersistenceManager`)                   | Hearth                                   |
// |-----------------------------------------------------------|------------------------------------------|
// | addEventRegistration → setQueryActive                     | `setQueryActive(location)`               |
// | applyServerOverwrite → updateServerCache(default(path))   | `updateServerCache(node, for: default(path))` |
// | applyServerMerge → updateServerCache(path, merge)         | `applyServerMerge(children, at: path)`   |
// | applyTaggedQueryOverwrite → updateServerCache(query)      | `updateServerCache(node, for: location)` |
// | applyListenComplete / applyTaggedListenComplete           | `setQueryComplete(location)`             |
// | applyUserOverwrite / applyUserMerge (persist)             | `saveWrite(.set / .update, at: path)`    |
// | ackUserWrite(revert: false) → applyUserWriteToServerCache | `applyAckedWrite(id)`                    |
// | ackUserWrite(revert: true)                                | `revertWrite(id)`                        |
//
// and checks, after every operation, the SDK's assertions and what a client reads offline:
//
// | check | SDK | here |
// |-------|-----|------|
// | every completed listen is a tracked query, complete | ✓ | ✓ |
// | for a completed listen that loads all data, the persisted node at its path = the server's | ✓ | ✓ `serverValue(at:)` and `serverCache(for:)` (complete) |
// | … and what the user reads there = the server's state with the pending writes applied in order | — | ✓ `value(at:)`, priorities aside (below) |
// | for a completed filtered listen, the persisted answer is complete and each child it serves is the server's | — | ✓ `serverCache(for:)` |
// | every complete default tracked query (listens, and acked writes' `ensureCompleteTrackedQuery`) holds the server's data | — | ✓ |
// | all of the above after a restart (every 100 operations the store is closed and reopened, sometimes after a compaction, and the listens re-activated) | — | ✓ |
//
// Departures from the SDK, all deliberate:
// - The SDK generator never sends a listen completion: `completeDataJustSentForListen` is read
//   but never assigned, so `completeListens` stays empty and the SDK test's assertions never
//   run. Here a listen's response is followed by its completion (what that field was for).
// - A listen at a location already listened to starts no new listen (the SDK's SyncTree
//   reuses the view); any other listen is answered by the server (the SDK's SyncTree skips
//   one below a complete default view; answering it too only adds checks).
// - Reads of the user's view compare priorities aside: Firebase's `CompoundWrite` applies a
//   pending `.priority` write after the other writes of the same node (so a priority set on an
//   empty node sticks once a later write fills it), which the simple in-order model does not.
//   The server cache is compared with priorities.
// - `NUM_TESTS` = 25 runs × `OPERATIONS_PER_TEST` = 300 operations, as in the SDK, on a
//   simulated file system.
import Foundation
import Testing
@_spi(HearthInternals) @testable import Hearth
import HearthTesting

@Suite struct SDKRandomPersistenceTests {
    static let numTests = 25
    static let operationsPerTest = 300
    static let listenProbability = 0.1
    static let maxListenDepth = 3
    static let reopenEvery = 100

    // MARK: - The generator (RandomOperationGenerator)

    enum Operation: CustomStringConvertible {
        case serverOverwrite(Path, Node)
        case serverMerge(Path, [ChildUpdate])
        /// A listen's response for a filtered query (a tagged overwrite).
        case taggedOverwrite(QueryLocation, Node)
        case listenComplete(QueryLocation)
        case userOverwrite(Path, Node)
        case userMerge(Path, [ChildUpdate])
        case ack(revert: Bool)

        var description: String {
            switch self {
            case let .serverOverwrite(p, n): "server overwrite \(p) = \(n.exportJSONString())"
            case let .serverMerge(p, c): "server merge \(p) \(c.map { "\($0.path)=\($0.node.exportJSONString())" })"
            case let .taggedOverwrite(l, n): "listen response \(l) = \(n.exportJSONString())"
            case let .listenComplete(l): "listen complete \(l)"
            case let .userOverwrite(p, n): "user overwrite \(p) = \(n.exportJSONString())"
            case let .userMerge(p, c): "user merge \(p) \(c.map { "\($0.path)=\($0.node.exportJSONString())" })"
            case let .ack(revert): revert ? "revert" : "ack"
            }
        }
    }

    struct Generator {
        // The SDK's model parameters.
        static let serverOpProbability = 0.7
        static let mergeProbability = 0.3
        static let revertProbability = 0.5
        static let serverAckProbability = 0.7
        static let serverListenResponseProbability = 0.7
        static let defaultParamsProbability = 0.5
        static let maxMergeSize = 20
        static let maxDepth = 3
        static let maxTopChildren = 10
        static let maxOtherChildren = 3
        static let priorityKeyProbability = 0.1
        static let indexKeyProbability = 0.1
        static let maxPrioValues = 10
        static let maxKeyValues = 100

        var rng: SeededRandom
        /// The server's true state.
        private(set) var server: Node = .empty
        /// User writes the server has not answered, oldest first.
        private(set) var outstandingWrites: [Operation] = []
        private var outstandingListens: [QueryLocation] = []
        private var completeDataJustSentForListen: QueryLocation?
        private var writeForLastUpdate: Operation?

        init(seed: UInt64) {
            rng = SeededRandom(seed: seed)
            server = randomNode(0, Self.maxDepth)
        }

        mutating func listen(_ location: QueryLocation) { outstandingListens.append(location) }

        /// The server's state with the outstanding writes applied in order.
        var serverWithWrites: Node {
            outstandingWrites.reduce(server) { Self.apply($1, to: $0) }
        }

        mutating func nextOperation() -> Operation {
            if writeForLastUpdate != nil { return ack() }
            if rng.chance(Self.serverOpProbability) {
                if let listen = completeDataJustSentForListen {
                    completeDataJustSentForListen = nil
                    return .listenComplete(listen)
                } else if !outstandingListens.isEmpty && rng.chance(Self.serverListenResponseProbability) {
                    let listen = outstandingListens.removeFirst()
                    completeDataJustSentForListen = listen  // never set in the SDK (see the header)
                    let data = server.child(at: listen.path)
                    if !listen.query.loadsAllData {
                        return .taggedOverwrite(listen, listen.query.window(of: data).node)
                    }
                    return .serverOverwrite(listen.path, data)
                } else if let write = outstandingWrites.first, rng.chance(Self.serverAckProbability) {
                    let path = Self.path(of: write)
                    let isEmptyPriorityError =
                        path.back?.string == ".priority" && server.child(at: path.parent!).isEmpty
                    if rng.chance(Self.revertProbability) || isEmptyPriorityError {
                        outstandingWrites.removeFirst()
                        return .ack(revert: true)
                    }
                    let serverOp = Self.userToServer(write)
                    server = Self.apply(serverOp, to: server)
                    writeForLastUpdate = write
                    return serverOp
                } else if rng.chance(Self.mergeProbability) {
                    let (path, children) = randomMerge()
                    let merge = Operation.serverMerge(path, children)
                    server = Self.apply(merge, to: server)
                    return merge
                } else {
                    let (path, node) = randomOverwrite()
                    if path.back?.string == ".priority" && server.child(at: path.parent!).isEmpty {
                        // A priority on an empty node: an illegal update.
                        return nextOperation()
                    }
                    let overwrite = Operation.serverOverwrite(path, node)
                    server = Self.apply(overwrite, to: server)
                    return overwrite
                }
            } else if rng.chance(Self.mergeProbability) {
                let (path, children) = randomMerge()
                outstandingWrites.append(.userMerge(path, children))
                return .userMerge(path, children)
            } else {
                let (path, node) = randomOverwrite()
                outstandingWrites.append(.userOverwrite(path, node))
                return .userOverwrite(path, node)
            }
        }

        private mutating func ack() -> Operation {
            writeForLastUpdate = nil
            outstandingWrites.removeFirst()
            return .ack(revert: false)
        }

        static func path(of write: Operation) -> Path {
            switch write {
            case .userOverwrite(let p, _), .userMerge(let p, _): p
            default: preconditionFailure("not a user write: \(write)")
            }
        }

        static func userToServer(_ write: Operation) -> Operation {
            switch write {
            case let .userOverwrite(p, n): .serverOverwrite(p, n)
            case let .userMerge(p, c): .serverMerge(p, c)
            default: preconditionFailure("not a user write: \(write)")
            }
        }

        /// The generator's `applyOperation`: in order, a priority on an empty node ignored.
        static func apply(_ op: Operation, to node: Node) -> Node {
            switch op {
            case let .serverOverwrite(p, n), let .userOverwrite(p, n):
                return node.updating(p, with: n)
            case let .serverMerge(p, c), let .userMerge(p, c):
                return node.merging(c.map { (p.appending($0.path), $0.node) })
            default:
                return node
            }
        }

        // MARK: Random values, as the SDK draws them

        mutating func randomKey(allowPriority: Bool) -> ChildKey {
            let r = Double.random(in: 0..<1, using: &rng)
            if allowPriority && r < Self.priorityKeyProbability { return ".priority" }
            if rng.chance(Self.indexKeyProbability) { return "index-key" }
            return ChildKey("key-\(rng.int(0..<Self.maxKeyValues))")
        }

        mutating func randomPriority() -> Priority? {
            if rng.chance(0.9) { return nil }
            if rng.chance(0.5) { return .string("prio-\(rng.int(0..<Self.maxPrioValues))") }
            return .number(Double(rng.int(0..<Self.maxPrioValues)))
        }

        mutating func randomLeaf(_ r: Double) -> Node {
            if r < 0.2 { return .empty }
            if r < 0.4 { return Node(.bool(rng.chance(0.5)), priority: randomPriority()) }
            if r < 0.6 {
                return Node(
                    .string("string-\(Int32(truncatingIfNeeded: Int64(bitPattern: rng.next())))"),
                    priority: randomPriority())
            }
            if r < 0.8 { return Node(.number(Double.random(in: 0..<1, using: &rng)), priority: randomPriority()) }
            return Node(.integer(exactly: Int64(bitPattern: rng.next())), priority: randomPriority())
        }

        mutating func randomLeafWithoutLongs() -> Node { randomLeaf(Double.random(in: 0..<1, using: &rng) * 0.8) }

        mutating func randomNode(_ depth: Int, _ maxDepth: Int) -> Node {
            if depth >= maxDepth { return randomLeaf(Double.random(in: 0..<1, using: &rng)) }
            let r = Double.random(in: 0..<1, using: &rng)
            if r < 0.2 { return .empty }
            if r < 0.4 { return randomLeaf(Double.random(in: 0..<1, using: &rng)) }
            var node = Node.empty
            for _ in 0..<(1 + rng.int(0..<(depth == 0 ? Self.maxTopChildren : Self.maxOtherChildren))) {
                let key = randomKey(allowPriority: false)
                node = node.updatingChild(key, randomNode(depth + 1, maxDepth))
            }
            return node.isEmpty ? .empty : node.withPriority(randomPriority())
        }

        mutating func randomPath(maxDepth: Int) -> Path {
            Path(keys: (0..<rng.int(0..<maxDepth)).map { _ in randomKey(allowPriority: false) })
        }

        /// The generator's `getRandomQueryParams`.
        mutating func randomQuery() -> QuerySpec {
            if rng.chance(Self.defaultParamsProbability) { return .default }
            let type = Double.random(in: 0..<1, using: &rng)
            let hasEnd = rng.chance(0.5), hasStart = rng.chance(0.5), hasLimit = rng.chance(0.5)
            var query: QuerySpec
            var start: Node, end: Node
            if type < 0.4 {
                query = QuerySpec(orderBy: .child("index-key"))
                start = randomLeafWithoutLongs()
                end = randomLeafWithoutLongs()
            } else if type < 0.8 {
                query = QuerySpec(orderBy: .key)
                start = .string(randomKey(allowPriority: false).string)
                end = .string(randomKey(allowPriority: false).string)
            } else {
                query = QuerySpec(orderBy: .priority)
                start = randomPriority().map { Node($0.leafValue) } ?? .empty
                end = randomPriority().map { Node($0.leafValue) } ?? .empty
            }
            if hasStart && hasEnd && Node.compareForOrdering(start, end) > 0 { swap(&start, &end) }
            // Bounds are values: a priority on one means nothing (and the builders want none).
            if hasStart { query = try! query.startAt(start.withPriority(nil)) }
            if hasEnd { query = try! query.endAt(end.withPriority(nil)) }
            if hasLimit {
                let limit = rng.int(0..<30) + 1
                query = rng.chance(0.5) ? try! query.limitToFirst(limit) : try! query.limitToLast(limit)
            }
            return query
        }

        mutating func randomMerge() -> (Path, [ChildUpdate]) {
            let path = randomPath(maxDepth: Self.maxDepth)
            // A CompoundWrite of immediate children: a key written twice keeps the last node.
            var children: [ChildKey: Node] = [:]
            var order: [ChildKey] = []
            for _ in 0..<(rng.int(0..<Self.maxMergeSize) + 1) {
                let key = randomKey(allowPriority: false)
                if children[key] == nil { order.append(key) }
                children[key] = randomNode(path.keys.count + 1, Self.maxDepth)
            }
            return (path, order.map { ChildUpdate(path: Path(keys: [$0]), node: children[$0]!) })
        }

        mutating func randomOverwrite() -> (Path, Node) {
            var path = randomPath(maxDepth: Self.maxDepth)
            if rng.chance(Self.priorityKeyProbability) {
                path = path.appending(Path(keys: [".priority"]))
                return (path, randomPriority().map { Node($0.leafValue) } ?? .empty)
            }
            return (path, randomNode(path.keys.count, Self.maxDepth - path.keys.count))
        }
    }

    // MARK: - The client (SyncTree with persistence) on Hearth

    struct Mismatch: Error, CustomStringConvertible {
        let description: String
    }

    final class Client {
        let fs: SimulatedFileSystem
        var store: Store
        /// Write ids of the outstanding user writes, oldest first (the generator's queue).
        var writeIDs: [Int64] = []
        var activeListens: Set<QueryLocation> = []
        /// Completed listens, in the order they completed.
        var completeListens: [QueryLocation] = []

        init(seed: UInt64) throws {
            fs = SimulatedFileSystem(seed: seed)
            store = try Store.open(directory: "/db", options: Self.options(fs))
        }

        static func options(_ fs: SimulatedFileSystem) -> Store.Options {
            var o = Store.Options()
            o.fileSystem = fs
            o.backgroundMaintenance = false
            return o
        }

        func commit(_ body: (inout StoreBatch) throws -> Void) throws {
            try store.commit { b in try body(&b) }
        }

        func listen(_ location: QueryLocation) throws {
            activeListens.insert(location)
            try commit { b in try b.setQueryActive(location) }
        }

        func apply(_ op: Operation) throws {
            switch op {
            case let .serverOverwrite(path, node):
                try commit { b in try b.updateServerCache(node, for: QueryLocation(path: path, query: .default)) }
            case let .serverMerge(path, children):
                try commit { b in try b.applyServerMerge(children, at: path) }
            case let .taggedOverwrite(location, node):
                try commit { b in try b.updateServerCache(node, for: location) }
            case let .listenComplete(location):
                if !completeListens.contains(location) { completeListens.append(location) }
                try commit { b in try b.setQueryComplete(location) }
            case let .userOverwrite(path, node):
                writeIDs.append(try store.saveWrite(.set(node), at: path))
            case let .userMerge(path, children):
                writeIDs.append(try store.saveWrite(.update(children), at: path))
            case .ack(let revert):
                let id = writeIDs.removeFirst()
                if revert {
                    try store.revertWrite(id)
                } else {
                    try commit { b in try b.applyAckedWrite(id) }
                }
            }
        }

        /// A restart: close, reopen (after a compaction if asked), listen again.
        func restart(compacting: Bool) throws {
            if compacting { _ = try store.compact() }
            try store.close()
            store = try Store.open(directory: "/db", options: Self.options(fs))
            for location in activeListens { try commit { b in try b.setQueryActive(location) } }
        }
    }

    static func withoutPriorities(_ node: Node) -> Node {
        if let value = node.leafValue { return Node(value) }
        return Node(children: node.children.map { (key: $0.key, value: withoutPriorities($0.value)) })
    }

    static func expectEqual(_ got: Node, _ want: Node, _ what: @autoclosure () -> String) throws {
        guard got == want else {
            throw Mismatch(description: "\(what()): Hearth \(got.exportJSONString()), model \(want.exportJSONString())")
        }
    }

    /// How much a run checked (so that it cannot pass by checking nothing, as the SDK's does).
    struct Coverage {
        var defaultListensChecked = 0
        var filteredListensChecked = 0
        var filteredChildrenChecked = 0
        var completeDefaultQueriesChecked = 0
        var acks = 0
        var reverts = 0
        var restarts = 0
    }

    /// The SDK test's checks, and the offline reads.
    static func check(_ client: Client, _ generator: Generator, _ coverage: inout Coverage) throws {
        let store = client.store
        let state = try store.state()
        let server = generator.server
        let userView = generator.serverWithWrites
        for location in client.completeListens {
            guard let q = state.trackedQuery(at: location) else {
                throw Mismatch(description: "Active listen must be in tracked queries: \(location)")
            }
            guard q.complete else {
                throw Mismatch(description: "a completed listen's tracked query is incomplete: \(location)")
            }
            let path = location.path
            let cache = try store.serverCache(for: location)
            if location.query.loadsAllData {
                try expectEqual(
                    try store.serverValue(at: path), server.child(at: path),
                    "Node persisted should match server node at \(path)")
                guard let cache, cache.complete else {
                    throw Mismatch(
                        description: "serverCache(for: \(location)) is not complete: \(String(describing: cache))")
                }
                try expectEqual(cache.node, server.child(at: path), "serverCache(for: \(location))")
                try expectEqual(
                    withoutPriorities(try store.value(at: path)), withoutPriorities(userView.child(at: path)),
                    "value(at: \(path)) (priorities aside)")
                coverage.defaultListensChecked += 1
            } else {
                guard let cache, cache.complete else {
                    throw Mismatch(
                        description: "serverCache(for: \(location)) is not complete: \(String(describing: cache))")
                }
                for (key, child) in cache.node.children {
                    try expectEqual(
                        child, server.child(at: path).child(key), "serverCache(for: \(location)) child \(key)")
                    coverage.filteredChildrenChecked += 1
                }
                coverage.filteredListensChecked += 1
            }
        }
        // Every complete default query — completed listens and acked writes' — holds the
        // server's data. (Not at a `.priority` path: a priority write on a node whose data the
        // cache does not hold is dropped, as in the SDK.)
        for q in state.trackedQueries.values
        where q.complete && q.query.loadsAllData && q.path.back?.string != ".priority" {
            try expectEqual(
                try store.serverValue(at: q.path), server.child(at: q.path), "complete default query at \(q.path)")
            coverage.completeDefaultQueriesChecked += 1
        }
        if let problem = state.checkInvariants() { throw Mismatch(description: "state invariant: \(problem)") }
    }

    /// One SDK `randomOperations` iteration: returns the operations played and the first mismatch.
    static func run(seed: UInt64) throws -> (played: [String], mismatch: Mismatch?, coverage: Coverage) {
        var generator = Generator(seed: seed)
        var coverage = Coverage()
        let client = try Client(seed: seed)
        var played: [String] = []
        for j in 0..<operationsPerTest {
            if client.activeListens.isEmpty || generator.rng.chance(listenProbability) {
                let path = generator.randomPath(maxDepth: maxListenDepth)
                let location = QueryLocation(path: path, query: generator.randomQuery())
                let isNew = !client.activeListens.contains(location)
                try client.listen(location)
                if isNew { generator.listen(location) }
                played.append("\(j): listen \(location)")
            } else {
                let op = generator.nextOperation()
                played.append("\(j): \(op)")
                if case .ack(let revert) = op {
                    if revert { coverage.reverts += 1 } else { coverage.acks += 1 }
                }
                try client.apply(op)
            }
            if (j + 1) % reopenEvery == 0 {
                let compacting = generator.rng.chance(0.5)
                played.append("\(j): restart\(compacting ? " after a compaction" : "")")
                try client.restart(compacting: compacting)
                coverage.restarts += 1
            }
            do {
                try check(client, generator, &coverage)
            } catch let mismatch as Mismatch {
                return (played, mismatch, coverage)
            }
        }
        try client.store.close()
        return (played, nil, coverage)
    }

    @Test(arguments: 1...UInt64(numTests))
    func randomOperations(seed: UInt64) throws {
        let (played, mismatch, coverage) = try Self.run(seed: seed)
        if let mismatch {
            Issue.record("seed \(seed): \(mismatch)\nlast operations:\n\(played.suffix(25).joined(separator: "\n"))")
        }
        // Unlike the SDK's run (see the header), every seed checks each kind of thing.
        #expect(
            coverage.defaultListensChecked > 0 && coverage.filteredListensChecked > 0
                && coverage.filteredChildrenChecked > 0
                && coverage.completeDefaultQueriesChecked > 0 && coverage.acks > 0 && coverage.reverts > 0
                && coverage.restarts == 3,
            "seed \(seed): \(coverage)")
    }
}
