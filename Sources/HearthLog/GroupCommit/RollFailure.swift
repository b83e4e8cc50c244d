// How a segment roll failed, and whether the log can go on without it.

/// A failed segment roll (``LogCore/roll(nextLSN:)``).
struct RollFailure: Error {
    /// What failed.
    var error: LogError
    /// Whether the log must be poisoned. True when the sync sealing the old segment failed (its
    /// unsynced pages are in an unknown state) or when the MANIFEST's rename or the directory
    /// sync after it failed (the MANIFEST on disk, now or after a crash, may name the new
    /// segment or not). False when it failed while the new segment file or MANIFEST.tmp was
    /// being created, written or synced: neither is named by the MANIFEST, both were removed
    /// again (best effort; an open removes what is left), and the old segment is still the
    /// active one — the store is as it was before the roll.
    var poisons: Bool
}
