// Memory per byte of data in a `hearth serve` process: `megabytes` MiB of JSON records (users
// with names, emails, numbers, flags and a few tags — what an app stores) PUT over REST in
// 1 MiB bodies into a fresh process, then its VmRSS once settled beside the JSON's size and the
// store directory's bytes on disk; then the process stopped, started again on the directory and
// read once (a shallow GET of the root), and its VmRSS again.
import Foundation

struct MemoryDataRun: Codable {
    var megabytes: Int
    var load: [Double]
    var jsonBytes: Int
    /// The store directory's files after the load, and after the stop (which checkpoints).
    var diskBytesLoaded: Int
    var diskBytesStopped: Int
    var rssEmptyKiB: Int
    var rssLoadedKiB: Int
    var rssRestartedKiB: Int
    var loadSeconds: Double
}

func memoryData(megabytes: Int) throws -> MemoryDataRun {
    let dir = tempDir("memdata")
    defer { try? FileManager.default.removeItem(atPath: dir) }
    let load = loadAverage()
    var serve = try ServeProcess.start(directory: dir + "/db")
    let empty = settled(serve)
    let client = HTTPClient(port: serve.port)
    var rng = SeededBenchRandom(seed: 48)
    var jsonBytes = 0
    let t0 = now()
    for chunk in 0..<megabytes {
        let body = records(bytes: 1 << 20, chunk: chunk, &rng)
        jsonBytes += body.utf8.count
        let answer = client.put(String(format: "/d/c%05d.json?print=silent", chunk), body: body)
        guard answer.status == 204 || answer.status == 200 else { fatalError("PUT \(chunk) answered \(answer)") }
    }
    let loadSeconds = now() - t0
    client.close()
    let loaded = settled(serve)
    let diskLoaded = directoryBytes(dir + "/db")
    serve.stop()
    let diskStopped = directoryBytes(dir + "/db")
    serve = try ServeProcess.start(directory: dir + "/db")
    let reader = HTTPClient(port: serve.port)
    _ = reader.get("/.json?shallow=true")
    reader.close()
    let restarted = settled(serve)
    serve.stop()
    return MemoryDataRun(
        megabytes: megabytes, load: load, jsonBytes: jsonBytes, diskBytesLoaded: diskLoaded, diskBytesStopped: diskStopped,
        rssEmptyKiB: empty.rssKiB, rssLoadedKiB: loaded.rssKiB, rssRestartedKiB: restarted.rssKiB, loadSeconds: loadSeconds)
}

/// About `bytes` of JSON: an object of user records keyed `c…-u…`.
func records(bytes: Int, chunk: Int, _ rng: inout SeededBenchRandom) -> String {
    let names = ["Ada", "Grace", "Alan", "Edsger", "Barbara", "Donald", "Frances", "John", "Radia", "Ken"]
    let tags = ["admin", "beta", "mobile", "web", "paid", "trial", "eu", "us"]
    var out = "{"
    var i = 0
    while out.utf8.count < bytes {
        if i > 0 { out += "," }
        let name = names[Int(rng.next() % UInt64(names.count))]
        let first = Int(rng.next() % UInt64(tags.count)), count = Int(rng.next() % 4)
        let tagList = (0..<count).map { "\"\(tags[(first + $0) % tags.count])\":true" }  // distinct keys
        out += "\"c\(chunk)-u\(i)\":{\"name\":\"\(name) \(rng.next() % 100_000)\",\"email\":\"\(name.lowercased())\(rng.next() % 1_000_000)@example.com\","
        out += "\"age\":\(18 + rng.next() % 70),\"score\":\(Double(rng.next() % 1_000_000) / 100),\"active\":\(rng.next() % 2 == 0),"
        out += "\"joined\":\(1_600_000_000_000 + Int(rng.next() % 100_000_000_000)),\"tags\":{\(tagList.joined(separator: ","))}}"
        i += 1
    }
    return out + "}"
}

/// A small deterministic generator (SplitMix64), so every run loads the same data.
struct SeededBenchRandom {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// The bytes of the regular files in `directory` and below.
func directoryBytes(_ directory: String) -> Int {
    guard let e = FileManager.default.enumerator(atPath: directory) else { return 0 }
    var total = 0
    while let name = e.nextObject() as? String {
        let attributes = try? FileManager.default.attributesOfItem(atPath: directory + "/" + name)
        if attributes?[.type] as? FileAttributeType == .typeRegular { total += (attributes?[.size] as? NSNumber)?.intValue ?? 0 }
    }
    return total
}
