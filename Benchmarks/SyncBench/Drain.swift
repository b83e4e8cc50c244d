// Drain: N writes made offline on distinct children, then `goOnline()`, timed until every
// write's result has arrived — against the floor: a raw WebSocket client sending the same N
// puts pipelined to the same kind of server and waiting for the N `ok`s.
import Dispatch
import Foundation
import Hearth
import HearthDatabase
@_spi(HearthInternals) import HearthWire
@_spi(HearthInternals) import HearthWireTesting
import NIOCore
import NIOWebSocket

/// The ~100-byte value every drained write sets.
let chatValue = String(repeating: "m", count: 100)

func chatKey(_ i: Int) -> String { String(format: "m%06d", i) }

struct DrainRun {
    /// Seconds for the N offline `setValue` calls.
    var offline: Double
    /// Seconds from `goOnline()` to the last write result.
    var drain: Double
}

/// One drain run on a fresh server and a fresh store.
func drainRun(n: Int, durability: Durability) async throws -> DrainRun {
    let server = try await LiveServer()
    let dir = tempDir("drain")
    defer { try? FileManager.default.removeItem(atPath: dir) }
    var o = Database.Options()
    o.storeDirectory = dir
    o.durability = durability
    o.connectAtOpen = false
    // This thread waits for the handlers: they run on a queue of their own, not on main.
    o.callbackQueue = DispatchQueue(label: "hearth.callbacks")
    o.cacheSizeBytes = 100 << 20
    let db = try Database(url: server.url, options: o)
    let chat = db.reference(withPath: "chat")
    let value = DatabaseValue.string(chatValue)
    let t0 = now()
    for i in 0..<n { _ = try chat.child(chatKey(i)).setValue(value, on: nil, withCompletionBlock: nil) }
    let offline = now() - t0
    let done = Counter(), failed = Counter()
    db.observeWriteResults { r in
        if r.error != nil { failed.add() }
        done.add()
    }
    let t1 = now()
    db.goOnline()
    guard waitUntil(timeout: 900, { done.count >= n }) else { fatalError("drain of \(n): only \(done.count) results") }
    let drain = now() - t1
    guard failed.count == 0 else { fatalError("drain of \(n): \(failed.count) writes refused") }
    try db.close()
    // The server has them all.
    let check = try server.rawClient()
    try check.send(ClientRequest.get(path: "chat", query: .default).message(number: 1))
    let answer = check.response(1, timeout: 60)
    guard answer.status == "ok", case .object(let members)? = answer.data, members.count == n else {
        fatalError("drain of \(n): the server does not hold the \(n) children (\(String(describing: answer.status)))")
    }
    check.close()
    try await server.stop()
    return DrainRun(offline: offline, drain: drain)
}

/// The floor: the same N puts, encoded beforehand, written back to back on one raw
/// connection (one flush at the end) to a fresh server; seconds until the N `ok`s arrived.
func drainFloor(n: Int) async throws -> Double {
    let server = try await LiveServer()
    let c = try server.rawClient()
    let messages = (0..<n).map { i in
        ClientRequest.put(path: Path(keys: ["chat", ChildKey(chatKey(i))]), data: .string(chatValue), hash: nil).message(number: i + 1)
    }
    let before = c.inbox.frames.withLock { $0.count }
    let channel = c.channel
    let t0 = now()
    channel.eventLoop.execute {
        for m in messages {
            let frame = WebSocketFrame(fin: true, opcode: .text, maskKey: .random(), data: channel.allocator.buffer(string: m))
            channel.write(frame, promise: nil)
        }
        channel.flush()
    }
    guard waitUntil(timeout: 600, { c.inbox.frames.withLock { $0.count } >= before + n }) else { fatalError("floor: responses lost") }
    let elapsed = now() - t0
    let frames = c.inbox.frames.withLock { Array($0[before...]) }
    let ok = frames.filter { if case .response(_, "ok", _)? = try? ServerMessage.decode($0) { true } else { false } }.count
    guard ok == n else { fatalError("floor: \(ok) of \(n) ok") }
    c.close()
    try await server.stop()
    return elapsed
}
