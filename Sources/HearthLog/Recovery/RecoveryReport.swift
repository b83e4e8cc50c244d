// What recovery did when a store was opened: the public account on `Log.recovery`.

/// What recovery did when a store was opened.
public struct RecoveryReport: Sendable {
    /// Whether a new, empty store was created.
    public var createdStore: Bool
    /// The torn tail that was truncated: file, offset of the cut, bytes removed.
    public var truncatedTail: (file: String, offset: UInt64, bytes: UInt64)?
    /// Temp files removed.
    public var removedTempFiles: [String]
    /// Unreferenced segment/checkpoint files removed.
    public var removedStrayFiles: [String]
    /// In salvage mode: the damage found and the files moved aside as `*.broken`.
    public var salvaged: (damage: Damage, movedAside: [String])?
    /// The LSN of the last recovered record (or the checkpoint LSN).
    public var lastLSN: LSN
    /// In a read-only open (``Log/Options/readOnly``): the torn tail of the last segment that was
    /// left in place and not read — file, offset where it starts, its bytes. (Under a live writer
    /// it may be a group that writer has not finished writing.) Nil otherwise.
    public var ignoredTornTail: (file: String, offset: UInt64, bytes: UInt64)? = nil
    /// Zero bytes the last writer preallocated after the last record of the last segment (it
    /// crashed before it could cut them off): file, offset of the last record's end, bytes. The
    /// normal end of the log (FORMAT.md §4.2), not damage — no record was lost. A writable open
    /// truncates them; a read-only open leaves them in place. Nil when there were none.
    public var preallocatedTail: (file: String, offset: UInt64, bytes: UInt64)? = nil
}
