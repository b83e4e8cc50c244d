// `HearthBench fillStages hearth`: the cache fill's per-byte costs, stage by stage, on the fill's
// own operations, single-threaded and in memory (no store, no maintenance): what the engine must
// do at least once per byte, to bound the fill's MB/s. Off the main workloads (run.sh does not
// run it). Each stage's figure is the CPU time of this thread (a shared machine's load does not
// move it much). Stages:
// - apply: the events applied to a `StoreState` (the persistent tree's path copies);
// - encode: each event encoded as the log's record payload (`EventCodec`);
// - deflate6 / deflate1: each payload deflated as the log does it (a reset stream per record;
//   a 4 KiB window and memLevel 3 up to 4 KiB, else 32 KiB / 8) at zlib level 6 and 1;
// - crc: CRC32C of each stored (deflated) payload;
// - write: the stored payloads appended to a file, one `write` per record, no sync;
// - cpEncode / cpDeflate6: the final cache encoded once (as one event) and deflated once in
//   64 KiB pieces at level 6 — one checkpoint holding every byte once.

import CZlib
import Engines
import Foundation
@_spi(HearthInternals) import Hearth
@_spi(HearthInternals) import HearthLog

/// Deflates `payload` with `stream` reset first; returns the stored size (the raw size when
/// deflating saves nothing, as the log stores it).
private func deflateRecord(_ stream: UnsafeMutablePointer<z_stream>, _ payload: [UInt8], _ out: inout [UInt8]) -> Int {
    guard payload.count >= 16 else { return payload.count }
    deflateReset(stream)
    if out.count < payload.count { out = [UInt8](repeating: 0, count: payload.count * 2) }
    let produced: Int = payload.withUnsafeBufferPointer { inBuf in
        out.withUnsafeMutableBufferPointer { outBuf in
            stream.pointee.next_in = UnsafeMutablePointer(mutating: inBuf.baseAddress)
            stream.pointee.avail_in = uInt(inBuf.count)
            stream.pointee.next_out = outBuf.baseAddress
            stream.pointee.avail_out = uInt(inBuf.count - 1)
            let rc = deflate(stream, Z_FINISH)
            return rc == Z_STREAM_END ? Int(stream.pointee.total_out) : inBuf.count
        }
    }
    return produced
}

private func makeStream(level: Int32, windowBits: Int32, memLevel: Int32) -> UnsafeMutablePointer<z_stream> {
    let s = UnsafeMutablePointer<z_stream>.allocate(capacity: 1)
    s.initialize(to: z_stream())
    deflateInit2_(s, level, Z_DEFLATED, -windowBits, memLevel, Z_DEFAULT_STRATEGY, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size))
    return s
}

/// The seconds and stored bytes of deflating every payload at `level`, as the log does.
private func deflateAll(_ payloads: [[UInt8]], level: Int32) -> (seconds: Double, stored: [[UInt8]]) {
    let small = makeStream(level: level, windowBits: 12, memLevel: 3)
    let large = makeStream(level: level, windowBits: 15, memLevel: 8)
    defer {
        deflateEnd(small)
        deflateEnd(large)
    }
    var out: [UInt8] = []
    var stored: [[UInt8]] = []
    stored.reserveCapacity(payloads.count)
    let t0 = threadCPUSeconds()
    for p in payloads {
        let n = deflateRecord(p.count <= 4096 ? small : large, p, &out)
        stored.append(n < p.count ? Array(out[0..<n]) : p)
    }
    return (threadCPUSeconds() - t0, stored)
}

func fillStages() throws {
    let ops = serverOps(seed: 20261121, bytes: Int(50.0 * scale * 1048576))
    let jsonBytes = ops.reduce(0) { n, op in
        switch op { case .overwrite(_, _, let b), .merge(_, _, let b): n + b }
    }
    let events: [StoreEvent] = ops.enumerated().map { i, op in
        switch op {
        case .overwrite(let p, let n, _): .serverOverwrite(path: p, node: n, at: Int64(i))
        case .merge(let p, let c, _): .serverMerge(path: p, children: c.map { ChildUpdate(path: $0.path, node: $0.node) }, at: Int64(i))
        }
    }
    var stage: [(String, Double)] = []
    // apply
    var state = StoreState()
    var t0 = threadCPUSeconds()
    for e in events { state.apply(e) }
    stage.append(("apply", threadCPUSeconds() - t0))
    // encode
    var payloads: [[UInt8]] = []
    payloads.reserveCapacity(events.count)
    t0 = threadCPUSeconds()
    for e in events { payloads.append(EventCodec.encode([e])) }
    stage.append(("encode", threadCPUSeconds() - t0))
    let raw = payloads.reduce(0) { $0 + $1.count }
    // deflate, both levels
    let (d6, stored6) = deflateAll(payloads, level: 6)
    stage.append(("deflate6", d6))
    let (d1, stored1) = deflateAll(payloads, level: 1)
    stage.append(("deflate1", d1))
    // crc
    t0 = threadCPUSeconds()
    var crc: UInt32 = 0
    for s in stored6 { crc ^= CRC32C.checksum(s) }
    stage.append(("crc", threadCPUSeconds() - t0))
    metrics["crcXor"] = Double(crc & 0xFF)
    // write, one call per record
    try? FileManager.default.removeItem(atPath: directory)
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    let fd = open(directory + "/stages.log", O_WRONLY | O_CREAT | O_TRUNC, 0o644)
    guard fd >= 0 else { throw EngineError.corrupt("open failed") }
    t0 = threadCPUSeconds()
    for s in stored6 { _ = s.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) } }
    stage.append(("write", threadCPUSeconds() - t0))
    close(fd)
    try? FileManager.default.removeItem(atPath: directory)
    // one checkpoint holding every byte once
    t0 = threadCPUSeconds()
    let cache = EventCodec.encode([.serverOverwrite(path: .root, node: state.serverCache, at: 0)])
    stage.append(("cpEncode", threadCPUSeconds() - t0))
    t0 = threadCPUSeconds()
    let (pieces, _) = Floor.deflate(cache)
    stage.append(("cpDeflate6", threadCPUSeconds() - t0))
    let mb = Double(jsonBytes) / 1048576
    for (name, seconds) in stage {
        metrics[name + "Seconds"] = seconds
        metrics[name + "MBPerSec"] = mb / seconds
        metrics[name + "MicrosPerOp"] = seconds / Double(ops.count) * 1e6
    }
    metrics["ops"] = Double(ops.count)
    metrics["jsonBytesIn"] = Double(jsonBytes)
    metrics["payloadBytes"] = Double(raw)
    metrics["stored6Bytes"] = Double(stored6.reduce(0) { $0 + $1.count })
    metrics["stored1Bytes"] = Double(stored1.reduce(0) { $0 + $1.count })
    metrics["checkpointRawBytes"] = Double(cache.count)
    metrics["checkpointDeflatedBytes"] = Double(pieces.reduce(0) { $0 + $1.0.count })
}
