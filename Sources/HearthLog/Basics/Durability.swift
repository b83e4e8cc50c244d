// The durability tiers (FORMAT.md §9).

/// When an append is acknowledged, and what survives a crash.
public enum Durability: Sendable, Equatable, Hashable {
    /// Acknowledged only after the record's group has been written and fdatasync'd (F_FULLFSYNC on
    /// Apple platforms). Survives process crash and power loss.
    case full
    /// Acknowledged once written to the OS page cache; a background flush syncs it within `interval`
    /// (at most one sync per interval from batched traffic). Survives a process crash; a power loss
    /// loses at most the records acknowledged during the last `interval` (plus the sync's own duration).
    /// Default interval 10 ms.
    case batched(interval: Duration = .milliseconds(10))
    /// Acknowledged once written to the OS page cache; synced only by `flush()`, `close()`, a segment
    /// roll or a checkpoint. Survives a process crash, not a power loss.
    case buffered
}
