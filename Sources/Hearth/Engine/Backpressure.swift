// When a writer waits for maintenance: a pure policy, applied to every commit of a capped store
// (Store+Queue.swift), whose waits keep the disk bound (Store+Maintenance.swift, FORMAT.md §8.5).
//
// Terms, for cap K: C is the last checkpoint's size (its files' bodies: the live chunks and
// state, and the dead bytes compaction leaves, at most liveShare + deadShare = 0.85 K), L the raw
// log bytes committed since it, r the compression ratio of the cache in the last checkpoint
// (stored / raw). The files hold F ≤ C + L + K/64 + K/32 (the disk bound's slack terms: between
// footprint checks, and the covered head of the live segment).
//
// A writer waits once L has passed the bound's log term, 0.1 K + K/16, and one of these holds:
//
// 1. C + L > 0.85 K + 0.1 K + K/16: the footprint has reached the most the disk bound's argument
//    allows it, F ≤ 1.0125 K + K/64 + K/32 < 1.06 K — the same bound as waiting at the log term
//    alone gives, where the term for C is its largest value, 0.85 K.
// 2. (C + L + K/64 + K/32) + N > 1.1 K: the next checkpoint's new file N, estimated as the log
//    at the cache's ratio (what changed since the last one: an install writes only the changed
//    chunks), r·L — or, while a checkpoint is written, the size it was planned to, if larger
//    (Store.CheckpointRoom.newFile) — would no longer fit beside the footprint under the
//    planned install peak — so from here on, more log would make that install prune the cache
//    for the log's sake, not the cache's, or pass the peak the one being written planned for.
//
// So a writer never waits earlier than at the log term, and waits later only while the files
// stay under the same 1.06 K and the next checkpoint is still estimated to fit without pruning.
// What it buys: a store well under its cap whose writer outruns the checkpoints (a 50 MiB fill
// under a 100 MiB cap: C ≈ 16 MB) does not wait for each checkpoint once the log since the last
// one passes 16 MiB. What it costs: the log a crash leaves to replay can reach ~0.85 K of raw
// bytes instead of 0.16 K, for a store whose checkpoint is small — at the default 10 MiB cap, a
// few MiB more to read at the next open.

extension Store {
    /// The log since the last checkpoint past which a capped store's writers may wait for
    /// maintenance: the most a checkpoint's threshold can be (``logShare`` of the cap) plus
    /// a sixteenth of the cap — the disk bound's term for it (Store+Maintenance.swift). They
    /// wait only once ``writersWait(log:checkpoint:ratio:cacheSizeBytes:)`` says so.
    static func backpressureLogBytes(cacheSizeBytes: Int) -> Int {
        Int(Double(cacheSizeBytes) * Store.logShare) + cacheSizeBytes / 16
    }

    /// Whether a writer waits for maintenance with `log` raw bytes committed since a checkpoint
    /// of `checkpoint` bytes whose cache compressed at `ratio` (stored / raw), under a cap of
    /// `cacheSizeBytes`: past ``backpressureLogBytes(cacheSizeBytes:)`` of log, once the
    /// footprint reaches the disk bound's largest (1.0125 of the cap) or the next checkpoint's
    /// new file is estimated not to fit beside it without pruning (see the top of this file).
    ///
    /// `installing`: the planned size of the checkpoint file being written, if one is — the
    /// new file the footprint must leave room for until it is installed.
    static func writersWait(
        log: Int, checkpoint: UInt64, ratio: Double, cacheSizeBytes: Int, installing: UInt64 = 0
    ) -> Bool {
        let logTerm = backpressureLogBytes(cacheSizeBytes: cacheSizeBytes)
        guard log > logTerm else { return false }
        let k = Double(cacheSizeBytes)
        let c = Double(checkpoint)
        let l = Double(log)
        if c + l > (Store.liveShare + Store.deadShare) * k + Double(logTerm) { return true }
        let footprint = c + l + k / 64 + k / 32
        let newFile = max(Double(installing), min(1, max(0, ratio)) * l)
        return footprint + newFile > Store.plannedPeak * k
    }
}
