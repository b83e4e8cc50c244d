// The FuzzWire check: a sequence of WebSocket text frames through the protocol's frame assembler
// (`FrameAssembler`, Firebase's count-prefixed segments) and every whole message through
// `ClientMessage.decode`; and its seeds.
// Fuzz/Sources/FuzzServerChecks is the one source of these checks: Tests/HearthServerTests/FuzzChecks/
// holds a symbolic link to each of its files (Fuzz/sync-checks.sh makes them; FuzzRegressionTests fails
// when a copy differs or is missing), so the fuzzers and `swift test` run one and the same code.
import Hearth
@_spi(HearthInternals) import HearthWire

extension FuzzServerChecks {
    /// The input: one byte choosing the assembler's limit, then frames separated by 0xFF. The adapter
    /// hands the core only frames that are UTF-8 (it closes the connection with 1007 otherwise), so a
    /// frame that is not ends the input, as it would end the connection.
    ///
    /// Checks: no trap; the assembler never holds more than its limit; what it returns is the frame
    /// itself or the concatenation of the segments since a count frame, within the limit; a refusal
    /// is a typed error (the connection closes); every message decodes to a value or a typed error,
    /// and a decoded request, encoded again, decodes to the same request.
    static func wire(_ bytes: [UInt8]) {
        guard let first = bytes.first else { return }
        let limit = [16, 100, 1_000, 16 << 20][Int(first & 3)]
        var assembler = FrameAssembler(maxMessageLength: limit)
        var segments: [String] = []
        for field in fields(Array(bytes.dropFirst())) {
            guard let frame = String(validating: field, as: UTF8.self) else { return }
            let wasAssembling = assembler.isAssembling
            let message: String?
            do { message = try assembler.receive(frame) } catch { return }
            check(
                assembler.bufferedByteCount <= limit,
                "the assembler holds \(assembler.bufferedByteCount) bytes, past its limit \(limit)")
            if wasAssembling { segments.append(frame) }
            guard let message else {
                check(
                    wasAssembling || assembler.isAssembling || Int(frame) == 0,
                    "a frame that is neither a count nor a keepalive yielded nothing: \(frame)")
                if !assembler.isAssembling { segments = [] }
                continue
            }
            check(message.utf8.count <= limit, "a message of \(message.utf8.count) bytes passed the limit \(limit)")
            check(
                message == (wasAssembling ? segments.joined() : frame),
                "the assembler returned something other than what was sent")
            segments = []
            decodeMessage(message)
        }
    }

    static func decodeMessage(_ text: String) {
        let message: ClientMessage
        do { message = try ClientMessage.decode(text) } catch { return }
        guard case .request(let number, let request) = message else { return }
        let again = request.message(number: number)
        let decoded: ClientMessage?
        do { decoded = try ClientMessage.decode(again) } catch {
            return check(false, "a decoded request, encoded again, does not decode: \(text) → \(again): \(error)")
        }
        check(decoded == message, "a decoded request, encoded again, decodes differently: \(text) → \(again)")
    }

    static func wireSeeds() -> [(String, [UInt8])] {
        var query = QuerySpec(orderBy: .child(Path(keys: ["score"])))
        query = (try? query.startAt(.number(3), key: ChildKey("k"))) ?? query
        query = (try? query.limitToLast(4)) ?? query
        let stamp = WriteStamp(writer: String(repeating: "ab", count: 16), id: 7)
        let requests: [ClientRequest] = [
            .listen(path: Path(keys: ["scores"]), query: query, tag: 3, hash: "h"),
            .unlisten(path: Path(keys: ["scores"]), query: .default, tag: nil),
            .put(path: Path(keys: ["a", "b"]), data: .object([JSONMember(key: "x", value: .number(1.5))]), hash: nil),
            .put(path: Path(keys: ["n"]), data: .number(1), hash: "abc=", stamp: stamp),
            .merge(path: .root, data: [(Path(keys: ["a", "c"]), .bool(true)), (Path(keys: ["d"]), .null)], stamp: stamp),
            .get(path: Path(keys: ["g"]), query: .default),
            .onDisconnectPut(path: Path(keys: ["status"]), data: .string("offline")),
            .onDisconnectMerge(path: Path(keys: ["s"]), data: [(Path(keys: ["t"]), .number(2))]),
            .onDisconnectCancel(path: Path(keys: ["status"])),
            .auth(credential: "token", isJWT: true, override: .object([JSONMember(key: "uid", value: .string("u"))])),
            .auth(credential: "owner", isJWT: false, override: nil),
            .unauth, .stats,
            .appCheck(token: "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhcHAiLCJleHAiOjk5OTk5OTk5OTl9.c2ln"), .unappCheck,
            .listen(
                path: Path(keys: ["big"]), query: .default, tag: nil, hash: "h",
                compoundHash: CompoundHash(
                    posts: [Path(keys: ["a"]), Path(keys: ["b", ".priority"])],
                    hashes: ["2jmj7l5rSw0yVb/vlWAYkK/YBwk=", "x", ""])),
        ]
        var seeds: [(String, [UInt8])] = []
        func seed(_ name: String, limit: UInt8, _ frames: [String]) {
            seeds.append((name, [limit] + Array(frames.map { Array($0.utf8) }.joined(separator: [0xFF]))))
        }
        for (i, request) in requests.enumerated() {
            seed("request-\(i)", limit: 3, FrameSplitter.frames(for: request.message(number: i + 1)))
        }
        let big = ClientRequest.put(path: Path(keys: ["big"]), data: .string(String(repeating: "é", count: 20_000)), hash: nil)
        seed("split", limit: 3, FrameSplitter.frames(for: big.message(number: 9)))
        seed("split-over-limit", limit: 2, FrameSplitter.frames(for: big.message(number: 9)))
        seed("control", limit: 1, ["0", #"{"t":"c","d":{"t":"p","d":{}}}"#, #"{"t":"c","d":{"t":"n"}}"#, "2", "{\"t\":", "\"c\",\"d\":{}}"])
        seed("unknown", limit: 3, [#"{"t":"d","d":{"r":1,"a":"zz","b":{}}}"#, #"{"t":"d","d":{"r":-1}}"#, "[1,2", "99999"])
        return seeds
    }
}
