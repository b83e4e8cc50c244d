// CPU time of a server's own threads in the bench's process, where clients and server share
// the two cores: the threads a server start created (its event loops, the commit thread) are
// found by comparing the process's threads before and after it, and their CPU clocks read by id
// (Linux's per-thread CPU clock, nanoseconds), so a figure per acknowledged write does not
// count the client threads.
import Foundation

/// The process's threads now: id → name (`/proc/self/task/ID/comm`).
func threadNames() -> [Int32: String] {
    var out: [Int32: String] = [:]
    for entry in (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? [] {
        guard let tid = Int32(entry) else { continue }
        let comm = (try? String(contentsOfFile: "/proc/self/task/\(entry)/comm", encoding: .utf8)) ?? ""
        out[tid] = comm.trimmingCharacters(in: .whitespacesAndNewlines)
    }
    return out
}

/// The threads now that were not in `before` and whose name starts with one of `prefixes`
/// (every new thread when `prefixes` is nil). A server's commit thread has no name of its own
/// (Foundation's `Thread.name` does not reach `comm` here), so a server start is measured by
/// all the threads it created — its event loops, its commit thread, and any GCD worker started
/// meanwhile, which runs the server's work.
func newThreads(since before: [Int32: String], prefixes: [String]? = nil) -> [Int32] {
    threadNames().compactMap { tid, name in
        before[tid] == nil && (prefixes.map { $0.contains(where: name.hasPrefix) } ?? true) ? tid : nil
    }
}

/// CPU seconds (user + system) the threads `tids` have used so far; a thread that has ended
/// counts nothing.
func cpuSeconds(_ tids: [Int32]) -> Double {
    tids.reduce(0) { sum, tid in
        // MAKE_THREAD_CPUCLOCK(tid, CPUCLOCK_SCHED) of the kernel's posix-cpu-timers.
        let clock = clockid_t(Int32(bitPattern: (~UInt32(bitPattern: tid)) << 3) | 6)
        var ts = timespec()
        guard clock_gettime(clock, &ts) == 0 else { return sum }
        return sum + Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }
}

/// CPU seconds (user + system) of the whole process so far: servers and clients.
func processCPUSeconds() -> Double {
    var usage = rusage()
    getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
    let seconds = { (t: timeval) in Double(t.tv_sec) + Double(t.tv_usec) / 1e6 }
    return seconds(usage.ru_utime) + seconds(usage.ru_stime)
}
