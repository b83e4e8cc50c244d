// The sync client's figures: offline writes drained after reconnect against
// the loopback floor, reconnect bytes for an unchanged ~10 MiB cache (and 10% changed), and the
// first event after an offline cold start. Run from Benchmarks/:
//   swift build -c release --product SyncBench && .build/release/SyncBench [--runs 5]
//     [--sizes 1000,10000,100000] [--durability buffered,full] [--only drain|reconnect|coldstart|caller]
import Foundation
import Hearth
import HearthDatabase

let args = CommandLine.arguments
if args.count >= 4, args[1] == "coldstart-child", let q = ColdQuery(rawValue: args[2]) {
    try coldStartChild(q, dir: args[3])
}

func option(_ name: String) -> String? {
    guard let i = args.firstIndex(of: name), i + 1 < args.count else { return nil }
    return args[i + 1]
}
let runs = Int(option("--runs") ?? "5") ?? 5
let sizes = (option("--sizes") ?? "1000,10000,100000").split(separator: ",").compactMap { Int($0) }
let only = option("--only")
let durabilities: [Durability] = (option("--durability") ?? "buffered,full").split(separator: ",").map { $0 == "full" ? .full : .buffered }
func wants(_ part: String) -> Bool { only == nil || only == part }

func ms(_ s: Double) -> String { String(format: "%.1f ms", s * 1000) }
func f0(_ x: Double) -> String { String(format: "%.0f", x) }
func bytes(_ n: Int) -> String { n.formatted(.number.grouping(.automatic)) }

print("SyncBench: medians of \(runs) runs, loopback, \(ProcessInfo.processInfo.activeProcessorCount) cores, load \(loadAverage())")

if wants("drain") {
    print("\n## Drain N offline writes after goOnline() (chat/mNNNNNN, 100-byte strings)")
    print("| N | durability | offline setValue/s | drain (median) | per write | floor (median) | floor per write | drain / floor |")
    print("|---|---|---|---|---|---|---|---|")
    for n in sizes {
        var floors: [Double] = []
        for _ in 0..<runs { floors.append(try await drainFloor(n: n)) }
        let floor = median(floors)
        for durability in durabilities {
            var offline: [Double] = [], drain: [Double] = []
            for _ in 0..<runs {
                let r = try await drainRun(n: n, durability: durability)
                offline.append(r.offline)
                drain.append(r.drain)
            }
            let d = median(drain)
            print("| \(bytes(n)) | \(durability == .full ? "full" : "buffered") | \(f0(Double(n) / median(offline))) | \(ms(d)) | \(String(format: "%.1f µs", d / Double(n) * 1e6)) | \(ms(floor)) | \(String(format: "%.1f µs", floor / Double(n) * 1e6)) | \(String(format: "%.2f×", d / floor)) |")
            print("    runs: drain \(drain.map { ms($0) }.joined(separator: ", ")); floor \(floors.map { ms($0) }.joined(separator: ", ")); offline \(offline.map { ms($0) }.joined(separator: ", "))")
        }
    }
}

if wants("caller") {
    print("\n## The caller's cost of setValue, offline, store on disk (chat/mNNNNNN, 100-byte strings)")
    print("| N | durability | p50 | p99 | max | N calls | last call → close() returned |")
    print("|---|---|---|---|---|---|---|")
    func us(_ s: Double) -> String { String(format: "%.1f µs", s * 1e6) }
    for n in sizes {
        for durability in durabilities {
            var rs: [CallerCostRun] = []
            for _ in 0..<runs { rs.append(try callerCostRun(n: n, durability: durability)) }
            // The run with the median p50.
            let r = rs.sorted { $0.quantile(0.5) < $1.quantile(0.5) }[rs.count / 2]
            print("| \(bytes(n)) | \(durability == .full ? "full" : "buffered") | \(us(r.quantile(0.5))) | \(us(r.quantile(0.99))) | \(us(r.latencies.last ?? 0)) | \(ms(r.calls)) | \(ms(r.drained)) |")
            print("    runs: p50 \(rs.map { us($0.quantile(0.5)) }.joined(separator: ", ")); p99 \(rs.map { us($0.quantile(0.99)) }.joined(separator: ", "))")
        }
    }
}

var coldStore: String?
if wants("reconnect") || wants("coldstart") {
    print("\n## Reconnect bytes, ~10 MiB kept synced (10,240 children of 1,000 bytes)")
    print("| layout | connection | bytes sent | bytes received | data pushes | open → last listen answered (median) |")
    print("|---|---|---|---|---|---|")
    for layout in Layout.allCases {
        let (f, dir) = try await reconnectBench(layout: layout, runs: runs)
        func row(_ what: String, _ cs: [WireCost]) {
            let sent = Set(cs.map(\.sent)).sorted().map(bytes).joined(separator: "/")
            let received = Set(cs.map(\.received)).sorted().map(bytes).joined(separator: "/")
            let pushes = Set(cs.map(\.dataPushes)).sorted().map(String.init).joined(separator: "/")
            print("| \(layout.rawValue) (\(layout.locations.count) location\(layout.locations.count == 1 ? "" : "s")) | \(what) | \(sent) | \(received) | \(pushes) | \(ms(median(cs.map(\.seconds)))) |")
        }
        row("first load", [f.first])
        row("reconnect, unchanged", f.unchanged)
        row("reconnect, 10% changed", f.changed)
        row("reconnect, 10% changed in one block", f.changedBlock)
        print("    runs: unchanged \(f.unchanged.map { ms($0.seconds) }.joined(separator: ", ")); changed \(f.changed.map { ms($0.seconds) }.joined(separator: ", ")); block \(f.changedBlock.map { ms($0.seconds) }.joined(separator: ", "))")
        if layout == .single { coldStore = dir } else { try? FileManager.default.removeItem(atPath: dir) }
    }
}

if wants("coldstart"), let dir = coldStore {
    print("\n## First event after an offline cold start (child process per run; store from the single-location run)")
    print("| how | query | open (median) | open → first value (median) | children | process spawn → exit (median) |")
    print("|---|---|---|---|---|---|")
    for q in ColdQuery.allCases {
        let rs = try coldStart(q, dir: dir, runs: runs)
        print("| \(q.viaDatabase ? "Database, offline" : "bare Store") | \(q.last50 ? "limitToLast(50)" : "whole location") | \(String(format: "%.1f ms", median(rs.map(\.openMs)))) | \(String(format: "%.1f ms", median(rs.map(\.firstMs)))) | \(rs[0].children) | \(String(format: "%.1f ms", median(rs.map(\.processMs)))) |")
        print("    runs: first \(rs.map { String(format: "%.1f", $0.firstMs) }.joined(separator: ", ")) ms")
    }
}
if let dir = coldStore { try? FileManager.default.removeItem(atPath: dir) }
try await clientGroup.shutdownGracefully()

func loadAverage() -> String {
    (try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8))?.split(separator: " ").prefix(3).joined(separator: " ") ?? "?"
}
