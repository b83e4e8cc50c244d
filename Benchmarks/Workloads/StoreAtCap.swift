// A Hearth store at its 10 MiB cap, as the workloads that need one build it.
@_spi(HearthInternals) import Hearth

/// The small location every "first read" measurement reads.
public let smallLocation: Path = "profiles/user42"

/// Builds a Hearth store at its 10 MiB cap in `dir`: realistic data fed until LRU pruning holds
/// the footprint at the cap, 100 tracked queries (40 filtered `limitToLast(50)` windows over
/// chat rooms with their tracked keys, 60 profiles), the small location, and 1,000 pending
/// writes; then compacted. Returns the MiB of JSON fed and the final footprint.
public func buildStoreAtCap(_ dir: String) throws -> (fedMiB: Int, footprint: UInt64) {
    var options = Store.Options()
    options.durability = .buffered
    let store = try Store.open(directory: dir, options: options)
    var workload = Workload(seed: 7)
    var fed = 0
    while true {
        for w in workload.writes(totalJSONBytes: 4 << 20) { try store.applyServerOverwrite(w.node, at: w.path) }
        fed += 4
        let stats = try store.stats()
        // At the cap: pruning has run and holds the footprint. Since inactive queries are pruned
        // within the cap without a checkpoint (e9f3c3c) the footprint can settle below 85% of
        // it, so feeding also stops at 72 MiB (what the committed builds fed to get there).
        if stats.pruneRounds > 0 && (stats.footprintBytes >= UInt64(Double(options.cacheSizeBytes) * 0.85) || fed >= 72) { break }
        precondition(fed < 1024, "never reached the cap")
    }
    try store.applyServerOverwrite(try Node(jsonText: #"{"name":"Ada","bio":"first programmer"}"#), at: smallLocation)
    let cache = try store.state().serverCache
    for i in 0..<100 {
        if i < 40 {
            let path = try Path(validating: "chats/room\(i)/messages")
            let query = try QuerySpec(orderBy: .child("ts")).limitToLast(50)
            try store.trackQuery(at: QueryLocation(path: path, query: query), complete: true, active: false, keys: Set(query.window(of: cache.child(at: path)).keys))
        } else {
            try store.trackQuery(at: QueryLocation(path: try Path(validating: "profiles/user\(i)"), query: .default), complete: true, active: false)
        }
    }
    try store.trackQuery(at: QueryLocation(path: smallLocation, query: .default), complete: true, active: false)
    for i in 0..<1000 {
        let w = workload.next()
        try store.saveWrite(.set(w.node), at: try Path(validating: "outbox/\(i)").appending(w.path))
    }
    try store.compact()
    let footprint = try store.stats().footprintBytes
    try store.close()
    return (fed, footprint)
}
