// The bytes a listen costs on a 10 MiB location, without a hash and with the matching one.
import Foundation
import Hearth
@_spi(HearthInternals) import HearthWire
@_spi(HearthInternals) import HearthWireTesting

func hashListen() async throws -> (withoutHash: Int, withHash: Int, dataBytes: Int) {
    let live = try await Live()
    let filler = String(repeating: "x", count: 1000)
    var children: [(Path, JSONValue)] = []
    for i in 0..<10_240 { children.append((Path(keys: [ChildKey(String(format: "c%05d", i))]), .string(filler))) }
    let w = try live.client()
    for chunk in stride(from: 0, to: children.count, by: 1024) {
        try w.send(ClientRequest.merge(path: "big", data: Array(children[chunk..<min(children.count, chunk + 1024)])).message(number: chunk + 1))
        _ = w.response(chunk + 1)
    }
    var data = Node.empty
    for (p, v) in children { data = data.updating(p, with: try Node(json: v)) }
    let first = try live.client()
    let before1 = first.inbox.bytes.load(ordering: .relaxed)
    try first.send(ClientRequest.listen(path: "big", query: .default, tag: nil, hash: "").message(number: 1))
    _ = first.response(1, timeout: 30)
    let without = first.inbox.bytes.load(ordering: .relaxed) - before1
    let second = try live.client()
    let before2 = second.inbox.bytes.load(ordering: .relaxed)
    try second.send(ClientRequest.listen(path: "big", query: .default, tag: nil, hash: data.hash).message(number: 1))
    _ = second.response(1)
    let with = second.inbox.bytes.load(ordering: .relaxed) - before2
    w.close(); first.close(); second.close()
    try await live.stop()
    return (without, with, data.exportJSONString().utf8.count)
}
