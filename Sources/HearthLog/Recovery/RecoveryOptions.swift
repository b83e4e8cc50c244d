// What recovery needs to know of the options a store is opened with (the opener, Log+Open.swift,
// derives it from `Log.Options`; recovery never sees the public type).

/// Recovery's part of the open options.
struct RecoveryOptions: Sendable {
    /// Create the directory and an empty store if missing (ignored read-only).
    var createIfMissing: Bool
    /// Keep the longest valid prefix on corruption instead of failing (ignored read-only).
    var salvage: Bool
    /// With `salvage`: a record the engine cannot replay; salvage cuts the log before it.
    var salvageCut: SalvageCut?
}
