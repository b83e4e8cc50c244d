// The figures as JSON (`--json PATH`), one record per run, so `scripts/sync_chart.py` can take
// medians and redraw the chart without rerunning anything.
import Foundation

/// One durable-writes run and its floors, measured just before it.
struct WritesRun: Codable {
    var connections: Int
    var load: [Double]
    var writesPerSecond: Double
    var meanBatch: Double
    var fsyncPerSecond: Double
    /// fdatasyncs per second of an overwrite of synced zero bytes (the store's pattern).
    var fsyncOverwritePerSecond: Double?
    var echoRoundTripsPerSecond: Double
    /// CPU µs per acknowledged write of the server's threads (its event loops and commit thread).
    var serverMicrosPerWrite: Double?
    /// CPU µs per acknowledged write of the whole process (clients included).
    var processMicrosPerWrite: Double?
    /// CPU µs per round trip of the echo server's threads.
    var echoServerMicrosPerRoundTrip: Double?
    /// CPU µs per round trip of the whole process during the echo (its clients included).
    var echoProcessMicrosPerRoundTrip: Double?
}

/// One fan-out run (`rounds` puts, each observed by every listener) and its broadcast floor.
struct FanOutRun: Codable {
    var listeners: Int
    var rounds: Int
    var load: [Double]
    /// `p` sent → the last listener's `d` frame read off its socket (client event loop), ms.
    var p50Ms: Double
    var p99Ms: Double
    /// `p` sent → the first listener's `d` frame read, ms.
    var firstP50Ms: Double
    /// `p` sent → every `d` decoded by the bench's threads, ms.
    var decodedP50Ms: Double
    var decodedP99Ms: Double
    /// The same rounds through a raw NIO WebSocket server that writes the same push bytes to every
    /// other connection (no store, no fsync), ms.
    var floorP50Ms: Double
    var floorP99Ms: Double
}

/// One `hearth serve` process: its memory before and after `connections` idle connections.
struct MemoryRun: Codable {
    var connections: Int
    /// Whether each connection also holds one listen on its own small location.
    var listening: Bool
    var load: [Double]
    var rssBeforeKiB: Int
    var rssAfterKiB: Int
    var privateDirtyBeforeKiB: Int
    var privateDirtyAfterKiB: Int
    var rssBytesPerConnection: Double
    var privateDirtyBytesPerConnection: Double
}

/// One `hearth serve` process with `idle` idle connections: a writer's acknowledged puts.
struct IdleWritesRun: Codable {
    var idle: Int
    var writes: Int
    var load: [Double]
    /// put sent → its `ok` read, ms.
    var p50Ms: Double
    var p99Ms: Double
}

/// One mixed-workload run (Mixed.swift): every connection listening and writing at a steady rate.
struct MixedRun: Codable {
    var connections: Int
    /// Writes per second per connection (offered, on a fixed schedule).
    var rate: Double
    var sharedLocations: Int
    var sharedEvery: Int
    var load: [Double]
    var offeredPerSecond: Double
    /// Writes sent, and how many of them went out more than 1 ms after their scheduled time.
    var sent: Int
    var sendsBehind: Int
    /// Acknowledgements read between the end of the warm-up and the last scheduled send, per
    /// second.
    var ackedPerSecond: Double
    /// put sent → its `ok` read, ms.
    var ackP50Ms: Double
    var ackP99Ms: Double
    /// Pushes of writes sent after the warm-up, and their put sent → push read, ms.
    var pushes: Int
    var deliveryP50Ms: Double
    var deliveryP99Ms: Double
}

/// Everything one ServerBench invocation measured.
struct Results: Codable {
    var date: String
    var cores: Int
    var secondsPerThroughputRun: Double
    var command: String
    var writes: [WritesRun] = []
    var fanOut: [FanOutRun] = []
    var memory: [MemoryRun] = []
    var memoryData: [MemoryDataRun] = []
    var idleWrites: [IdleWritesRun] = []
    var mixed: [MixedRun] = []
    var hashListen: [String: Int]?
    var restartSeconds: [Double]?
}

func write(_ results: Results, to path: String) throws {
    let e = JSONEncoder()
    e.outputFormatting = [.prettyPrinted, .sortedKeys]
    try e.encode(results).write(to: URL(fileURLWithPath: path))
}
