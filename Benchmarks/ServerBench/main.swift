// The server's figures: durable writes per second from 1, 16 and 64
// connections against the machine's floors (fsync rate × the measured group-commit batch; raw
// loopback WebSocket echo), fan-out latency to 10, 100 and 1,000 listeners against a raw
// broadcast of the same bytes, the bytes a matching-hash listen costs on a 10 MiB location,
// the time from `hearth serve` process start to accepting connections over a 100 MiB database,
// the memory a `hearth serve` process spends per idle connection, a write's round trip
// beside 0, 1,000 and 10,000 idle connections, reads per second (WebSocket `g`, REST `GET`)
// against the echo, and a mixed workload of 1,000 connections each listening and writing.
// Run: `swift run -c release ServerBench [--json PATH] [--runs N] [--only writes,fanout,…]`
// (options: Support.swift).
import Foundation
import HearthServer

// Thousands of idle connections need as many descriptors: the soft limit goes to the hard one
// (`ulimit -Hn`), here as in `hearth serve`, which inherits it and raises its own the same way.
let fileLimit = NetworkServer.raiseFileDescriptorLimit()
report("ServerBench: open files limit \(fileLimit)")
report("ServerBench: \(options.seconds) s per throughput run, \(options.runs) runs per row, loopback, \(ProcessInfo.processInfo.activeProcessorCount) cores, \(loadText(loadAverage()))")
var results = Results(
    date: ISO8601DateFormatter().string(from: Date()), cores: ProcessInfo.processInfo.activeProcessorCount,
    secondsPerThroughputRun: options.seconds, command: CommandLine.arguments.joined(separator: " "))
@MainActor func save() throws { if let path = options.json { try write(results, to: path) } }

if options.wants("writes") {
    // Runs interleave the connection counts, so a change of load hits every row alike; each row's
    // floors are measured just before it.
    for run in 1...options.runs {
        for c in options.connections {
            let load = loadAverage()
            let fsync = fsyncRate(), overwrite = fsyncOverwriteRate()
            let (echo, echoMicros, echoProcessMicros) = try await echoRoundTrips(connections: c)
            let (rate, batch, serverMicros, processMicros) = try await writes(connections: c)
            results.writes.append(WritesRun(connections: c, load: load, writesPerSecond: rate, meanBatch: batch, fsyncPerSecond: fsync, fsyncOverwritePerSecond: overwrite, echoRoundTripsPerSecond: echo,
                                            serverMicrosPerWrite: serverMicros, processMicrosPerWrite: processMicros, echoServerMicrosPerRoundTrip: echoMicros,
                                            echoProcessMicrosPerRoundTrip: echoProcessMicros))
            report(String(format: "writes run %d, %2d connection(s): %.0f acknowledged durable writes/s, mean group commit %.1f writes; server CPU %.1f µs/write (process %.1f); floor fdatasync %.0f/s × batch = %.0f/s (of an overwrite: %.0f/s × batch = %.0f/s); raw WebSocket echo %.0f round trips/s, its server CPU %.1f µs/round trip (process %.1f) (%@)",
                          run, c, rate, batch, serverMicros, processMicros, fsync, fsync * batch, overwrite, overwrite * batch, echo, echoMicros, echoProcessMicros, loadText(load)))
        }
        try save()
    }
    for c in options.connections {
        let rows = results.writes.filter { $0.connections == c }
        let rate = median(rows.map(\.writesPerSecond)), echo = median(rows.map(\.echoRoundTripsPerSecond))
        let floor = median(rows.map { $0.fsyncPerSecond * $0.meanBatch })
        let overwriteFloor = median(rows.compactMap { r in r.fsyncOverwritePerSecond.map { $0 * r.meanBatch } })
        let micros = median(rows.compactMap(\.serverMicrosPerWrite)), echoMicros = median(rows.compactMap(\.echoServerMicrosPerRoundTrip))
        let echoProcessMicros = median(rows.compactMap(\.echoProcessMicrosPerRoundTrip))
        report(String(format: "writes, %2d connection(s), median of %d: %.0f/s, batch %.1f, server CPU %.1f µs/write (process %.1f); %.0f%% of fdatasync × batch (%.0f/s; of an overwrite's: %.0f%% of %.0f/s), %.0f%% of echo (%.0f/s, server CPU %.1f µs/round trip, process %.1f)",
                      c, rows.count, rate, median(rows.map(\.meanBatch)), micros, median(rows.compactMap(\.processMicrosPerWrite)), 100 * rate / floor, floor, 100 * rate / overwriteFloor, overwriteFloor, 100 * rate / echo, echo, echoMicros, echoProcessMicros))
    }
}
if options.wants("fanout") {
    for run in 1...options.runs {
        for n in options.listeners {
            let r = try await fanOut(listeners: n, rounds: options.rounds)
            results.fanOut.append(r)
            report(String(format: "fan-out run %d to %4d listening connections (%d rounds): p50 %.2f ms, p99 %.2f ms (p sent → last d read; first d p50 %.2f ms; all decoded p50 %.2f, p99 %.2f ms); floor, raw broadcast: p50 %.2f ms, p99 %.2f ms (%@)",
                          run, n, r.rounds, r.p50Ms, r.p99Ms, r.firstP50Ms, r.decodedP50Ms, r.decodedP99Ms, r.floorP50Ms, r.floorP99Ms, loadText(r.load)))
        }
        try save()
    }
    for n in options.listeners {
        let rows = results.fanOut.filter { $0.listeners == n }
        let p50 = median(rows.map(\.p50Ms)), p99 = median(rows.map(\.p99Ms))
        let f50 = median(rows.map(\.floorP50Ms)), f99 = median(rows.map(\.floorP99Ms))
        report(String(format: "fan-out to %4d listeners, median of %d runs: p50 %.2f ms (%.1f× floor %.2f), p99 %.2f ms (%.1f× floor %.2f)",
                      n, rows.count, p50, p50 / f50, f50, p99, p99 / f99, f99))
    }
}
if options.wants("memory") {
    // The bench holds the client end of every connection, the server (which raises its own
    // limit the same way) the other: each needs a descriptor per connection and a few more.
    var rows: [(Int, Bool)] = options.idle.filter { $0 + 256 <= fileLimit }.map { ($0, false) }
    for n in options.idle where n + 256 > fileLimit { report("memory: \(n) connections skipped, open files limit \(fileLimit)") }
    rows.append((1000, true))
    for run in 1...options.runs {
        for (n, listening) in rows {
            let r = try await idleMemory(connections: n, listening: listening)
            results.memory.append(r)
            report(String(format: "memory run %d, %4d idle connections%@: VmRSS %d → %d KiB (%.0f bytes/connection), Private_Dirty %d → %d KiB (%.0f bytes/connection) (%@)",
                          run, n, listening ? " each with one listen" : "", r.rssBeforeKiB, r.rssAfterKiB, r.rssBytesPerConnection,
                          r.privateDirtyBeforeKiB, r.privateDirtyAfterKiB, r.privateDirtyBytesPerConnection, loadText(r.load)))
        }
        try save()
    }
    for (n, listening) in rows {
        let rs = results.memory.filter { $0.connections == n && $0.listening == listening }
        report(String(format: "memory, %4d connections%@, median of %d: %.0f bytes RSS, %.0f bytes Private_Dirty per connection",
                      n, listening ? " each with one listen" : "", rs.count, median(rs.map(\.rssBytesPerConnection)), median(rs.map(\.privateDirtyBytesPerConnection))))
    }
}
if options.only?.contains("memory-data") == true {
    for run in 1...options.runs {
        for mb in options.dataMegabytes {
            let r = try memoryData(megabytes: mb)
            results.memoryData.append(r)
            report(String(format: "memory-data run %d, %4d MiB: JSON %d bytes loaded in %.0f s; on disk %d bytes (%d after stop); VmRSS empty %d KiB, loaded %d KiB (%.2f× disk, %.2f× JSON), restarted + first read %d KiB (%.2f× disk) (%@)",
                          run, mb, r.jsonBytes, r.loadSeconds, r.diskBytesLoaded, r.diskBytesStopped, r.rssEmptyKiB, r.rssLoadedKiB,
                          Double(r.rssLoadedKiB * 1024) / Double(r.diskBytesLoaded), Double(r.rssLoadedKiB * 1024) / Double(r.jsonBytes),
                          r.rssRestartedKiB, Double(r.rssRestartedKiB * 1024) / Double(r.diskBytesStopped), loadText(r.load)))
        }
        try save()
    }
    for mb in options.dataMegabytes {
        let rs = results.memoryData.filter { $0.megabytes == mb }
        let loaded = median(rs.map { Double($0.rssLoadedKiB * 1024) }), restarted = median(rs.map { Double($0.rssRestartedKiB * 1024) })
        let disk = median(rs.map { Double($0.diskBytesLoaded) }), stopped = median(rs.map { Double($0.diskBytesStopped) })
        report(String(format: "memory-data, %4d MiB of JSON, median of %d: VmRSS loaded %.0f MiB (%.2f× its %.0f MiB on disk), restarted %.0f MiB (%.2f× its %.0f MiB on disk)",
                      mb, rs.count, loaded / 1048576, loaded / disk, disk / 1048576, restarted / 1048576, restarted / stopped, stopped / 1048576))
    }
}
if options.wants("reads") {
    // Runs interleave WebSocket, REST and the echo floor at each connection count.
    var rows: [Int: [(ws: Double, rest: Double, echo: Double)]] = [:]
    for run in 1...options.runs {
        for c in options.connections {
            let echo = try await echoRoundTrips(connections: c).perSecond
            let ws = try await webSocketReads(connections: c)
            let rest = try await restReads(connections: c)
            rows[c, default: []].append((ws, rest, echo))
            report(String(format: "reads run %d, %2d connection(s): WebSocket g %.0f/s, REST GET %.0f/s; raw WebSocket echo %.0f round trips/s (%@)",
                          run, c, ws, rest, echo, loadText(loadAverage())))
        }
    }
    for c in options.connections {
        let r = rows[c]!
        let ws = median(r.map(\.ws)), rest = median(r.map(\.rest)), echo = median(r.map(\.echo))
        report(String(format: "reads, %2d connection(s), median of %d: WebSocket g %.0f/s (%.0f%% of echo), REST GET %.0f/s (%.0f%% of echo); echo %.0f/s",
                      c, r.count, ws, 100 * ws / echo, rest, 100 * rest / echo, echo))
    }
}
if options.wants("idlewrites") {
    // Each run visits every count in turn, so a change of load hits every row alike.
    let counts = [0] + options.idleWriters.filter { $0 > 0 && $0 + 256 <= fileLimit }
    for n in options.idleWriters where n + 256 > fileLimit { report("idle writes: \(n) connections skipped, open files limit \(fileLimit)") }
    for run in 1...options.runs {
        for n in counts {
            let r = try idleWrites(idle: n, writes: options.rounds * 5)
            results.idleWrites.append(r)
            report(String(format: "idle writes run %d, %5d idle connections: %d acknowledged puts, p50 %.3f ms, p99 %.3f ms (%@)",
                          run, n, r.writes, r.p50Ms, r.p99Ms, loadText(r.load)))
        }
        try save()
    }
    let base = results.idleWrites.filter { $0.idle == 0 }
    let b50 = median(base.map(\.p50Ms)), b99 = median(base.map(\.p99Ms))
    for n in counts {
        let rs = results.idleWrites.filter { $0.idle == n }
        let p50 = median(rs.map(\.p50Ms)), p99 = median(rs.map(\.p99Ms))
        report(String(format: "idle writes, %5d idle connections, median of %d runs: p50 %.3f ms (%.2f× no idle), p99 %.3f ms (%.2f× no idle)",
                      n, rs.count, p50, p50 / b50, p99, p99 / b99))
    }
}
if options.wants("idlecore") {
    // Runs interleave the counts; each figure is the median over runs of the per-run median.
    let counts = [0] + options.idleWriters
    var rows: [Int: [(Double, Double)]] = [:]
    for run in 1...options.runs {
        for n in counts {
            let r = idleCore(idle: n, writes: options.rounds * 50)
            rows[n, default: []].append(r)
            report(String(format: "idle core run %d, %5d idle connections: a put %.2f µs, a tick %.1f µs", run, n, r.writeMicros, r.tickMicros))
        }
    }
    let base = median(rows[0]!.map(\.0))
    for n in counts {
        let w = median(rows[n]!.map(\.0)), t = median(rows[n]!.map(\.1))
        report(String(format: "idle core, %5d idle connections, median of %d runs: a put %.2f µs (%.2f× no idle), a tick %.1f µs",
                      n, rows[n]!.count, w, w / base, t))
    }
}
if options.wants("mixed") {
    // Each connection is open twice in this process (client and server side).
    let counts = options.mixed.filter { 2 * $0 + 256 <= fileLimit }
    for n in options.mixed where 2 * n + 256 > fileLimit { report("mixed: \(n) connections skipped, open files limit \(fileLimit)") }
    for run in 1...options.runs {
        for n in counts {
            let r = try await mixed(MixedShape(connections: n, rate: options.mixedRate), seconds: options.seconds)
            results.mixed.append(r)
            report(String(format: "mixed run %d, %4d connections × %.1f writes/s (%d shared locations, every %dth write there): %.0f acknowledged writes/s of %.0f offered (%d sent, %d over 1 ms late); ack p50 %.2f ms, p99 %.2f ms; %d pushes, delivery p50 %.2f ms, p99 %.2f ms (%@)",
                          run, n, r.rate, r.sharedLocations, r.sharedEvery, r.ackedPerSecond, r.offeredPerSecond, r.sent, r.sendsBehind,
                          r.ackP50Ms, r.ackP99Ms, r.pushes, r.deliveryP50Ms, r.deliveryP99Ms, loadText(r.load)))
        }
        try save()
    }
    for n in counts {
        let rs = results.mixed.filter { $0.connections == n }
        report(String(format: "mixed, %4d connections, median of %d runs: %.0f acknowledged writes/s (offered %.0f); ack p50 %.2f ms, p99 %.2f ms; delivery p50 %.2f ms, p99 %.2f ms",
                      n, rs.count, median(rs.map(\.ackedPerSecond)), median(rs.map(\.offeredPerSecond)), median(rs.map(\.ackP50Ms)),
                      median(rs.map(\.ackP99Ms)), median(rs.map(\.deliveryP50Ms)), median(rs.map(\.deliveryP99Ms))))
    }
}
if options.wants("hash") {
    let (without, with, data) = try await hashListen()
    results.hashListen = ["withoutHash": without, "withHash": with, "dataBytes": data]
    report("listen on a 10 MiB location (\(data) bytes as JSON): \(without) bytes received without a hash, \(with) with the matching hash")
}
if options.wants("restart") {
    if FileManager.default.isExecutableFile(atPath: options.hearth) {
        let times = try restart(megabytes: 100, runs: 3)
        results.restartSeconds = times
        report(String(format: "restart over 100 MiB: process start → accepting connections %@ s (median %.2f s)",
                      times.map { String(format: "%.2f", $0) }.joined(separator: ", "), percentile(times, 0.5)))
    } else {
        report("restart: skipped, no hearth binary at \(options.hearth) (build it with `swift build -c release --product hearth` in the root or in Benchmarks, or pass --hearth)")
    }
}
try save()
try await clientGroup.shutdownGracefully()
