// What recovery hands the opener: everything the write side starts from. Recovery builds no log
// object; the opener (Log+Open.swift) composes this with the write side.

/// The state of a store after recovery, ready for the write side.
struct RecoveredState {
    /// What recovery did (public, on ``Log/recovery``).
    var report: RecoveryReport
    /// The LSN of the last recovered record (or the checkpoint's LSN).
    var lastLSN: LSN
    /// The MANIFEST in force.
    var manifest: Manifest
    /// The checkpoint the MANIFEST names, header verified.
    var checkpoint: Checkpoint?
    /// The store's lock (held until close; none for a read-only open).
    var lock: any StoreLock
    /// The last live segment, open for appending at the end of its valid prefix (synced), and the
    /// checksum chain there. Nil read-only, or when there is no live segment: the opener then
    /// starts the first one.
    var tail: Tail?

    /// An open segment and where appending resumes in it.
    typealias Tail = (file: any StoreFile, header: SegmentHeader, offset: UInt64, chain: UInt32)
}
