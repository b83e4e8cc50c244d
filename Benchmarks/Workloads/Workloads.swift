// Deterministic, realistic realtime-database data for benchmarks: chat messages, game
// scores and user profiles, generated from a fixed seed so every engine and every run sees
// the same bytes.
import HearthLog
import HearthModel
import HearthTesting

/// One server write of the workload: a location and the JSON written there.
public struct WorkloadWrite: Sendable {
    public let path: Path
    public let json: String
    public let node: Node
}

/// Generates the realistic data set.
public struct Workload: Sendable {
    private var rng: SeededRandom
    private var counter = 0
    static let words = ["hey", "ok", "see", "you", "at", "the", "game", "tonight", "lol", "sure", "when", "are", "we",
                        "meeting", "🎉", "great", "score", "thanks", "día", "café", "new", "level", "unlocked", "brb"]
    static let names = ["Ada", "Grace", "Linus", "Margaret", "Dennis", "Barbara", "Ken", "Frances", "Edsger", "Radia"]

    public init(seed: UInt64 = 20261121) { rng = SeededRandom(seed: seed) }

    mutating func int(_ n: Int) -> Int { Int(rng.next() % UInt64(n)) }

    mutating func sentence() -> String {
        (0..<(3 + int(12))).map { _ in Workload.words[int(Workload.words.count)] }.joined(separator: " ")
    }

    /// A Firebase-style push id: 20 characters, time-ordered.
    mutating func pushID() -> String {
        let chars = Array("-0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ_abcdefghijklmnopqrstuvwxyz")
        counter += 1
        var id = ""
        var t = 1_700_000_000_000 + counter
        var head: [Character] = []
        for _ in 0..<8 { head.append(chars[t % 64]); t /= 64 }
        id += String(head.reversed())
        for _ in 0..<12 { id.append(chars[int(64)]) }
        return id
    }

    /// The next server write: a chat message (60%), a score table update (25%) or a profile (15%).
    public mutating func next() -> WorkloadWrite {
        let roll = int(100)
        let path: String
        let json: String
        if roll < 60 {
            let room = "room\(int(40))"
            path = "chats/\(room)/messages/\(pushID())"
            json = #"{"author":"\#(Workload.names[int(10)])","text":"\#(sentence())","ts":\#(1_700_000_000_000 + counter * 1000),"read":\#(int(2) == 0 ? "true" : "false")}"#
        } else if roll < 85 {
            let game = "game\(int(20))"
            var entries: [String] = []
            for _ in 0..<(5 + int(20)) { entries.append(#""\#(pushID())":{"player":"\#(Workload.names[int(10)])","score":\#(int(100000)),"level":\#(int(50))}"#) }
            path = "scores/\(game)"
            json = "{" + entries.joined(separator: ",") + "}"
        } else {
            let uid = "user\(int(5000))"
            path = "profiles/\(uid)"
            json = #"{"name":"\#(Workload.names[int(10)]) \#(int(1000))","bio":"\#(sentence()) \#(sentence())","age":\#(18 + int(60)),"premium":\#(int(3) == 0 ? "true" : "false"),"tags":{"a":"\#(Workload.words[int(24)])","b":"\#(Workload.words[int(24)])"}}"#
        }
        let p = try! Path(validating: path)
        return WorkloadWrite(path: p, json: json, node: try! Node(jsonText: json))
    }

    /// Writes until `bytes` of JSON have been produced.
    public mutating func writes(totalJSONBytes bytes: Int) -> [WorkloadWrite] {
        var out: [WorkloadWrite] = []
        var total = 0
        while total < bytes {
            let w = next()
            total += w.json.utf8.count
            out.append(w)
        }
        return out
    }
}
