// Data-model micro-benchmarks: the cost of reading and updating one child of a node with
// 100,000 children (issue: O(log n) with structural sharing, not a sorted array copied per
// update), and of hashing and JSON export for reference.
import Benchmark
import HearthModel

/// A node with `count` children keyed `c0000000…` (string keys) holding small objects.
func wideNode(_ count: Int) -> Node {
    let pairs = (0..<count).map { i -> (key: ChildKey, value: Node) in
        let key = childKey(i)
        let value = Node(children: [("score", .number(Double(i % 1000))), ("name", .string("player \(i)"))])
        return (key, value)
    }
    return Node(children: ChildMap(sortedPairs: pairs))
}

/// The key of child `i`: `c` and 7 digits, so keys are strings that sort by number.
func childKey(_ i: Int) -> ChildKey {
    ChildKey("c" + String(repeating: "0", count: 7 - String(i).count) + String(i))
}

let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: [.wallClock, .throughput, .mallocCountTotal],
        maxDuration: .seconds(3),
        maxIterations: 1_000_000
    )

    let node = wideNode(100_000)
    var rng = SystemRandomNumberGenerator()
    let keys = (0..<1024).map { _ in childKey(Int.random(in: 0..<100_000, using: &rng)) }

    Benchmark("Node.child(key) on 100,000 children") { benchmark in
        var i = 0
        for _ in benchmark.scaledIterations {
            blackHole(node.child(keys[i & 1023]))
            i &+= 1
        }
    }

    Benchmark("Node.updatingChild(key) on 100,000 children") { benchmark in
        var current = node
        var i = 0
        for _ in benchmark.scaledIterations {
            current = current.updatingChild(keys[i & 1023], .number(Double(i)))
            i &+= 1
        }
        blackHole(current)
    }

    let paths = keys.map { Path(keys: [$0, "score"]) }
    Benchmark("Node.updating(path) depth 2 on 100,000 children") { benchmark in
        var current = node
        var i = 0
        for _ in benchmark.scaledIterations {
            current = current.updating(paths[i & 1023], with: .number(Double(i)))
            i &+= 1
        }
        blackHole(current)
    }

    let small = wideNode(10_000)
    Benchmark("Node.hash of 10,000 children", configuration: .init(maxDuration: .seconds(3), maxIterations: 50)) { benchmark in
        for _ in benchmark.scaledIterations { blackHole(small.hash) }
    }
}
