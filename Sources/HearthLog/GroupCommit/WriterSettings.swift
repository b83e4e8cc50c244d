// What the write side needs to know of the options a store is opened with (the opener,
// Log+Open.swift, derives it from `Log.Options`; the write side never sees the public type).

/// The write side's part of the open options.
struct WriterSettings: Sendable {
    /// Segments roll once they would exceed this size.
    var segmentSize: Int
    /// Upper bound on the bytes of one group commit (one write call).
    var maxBatchBytes: Int
    /// zlib level 1–9 for record payloads.
    var compressionLevel: Int32
    /// Payloads shorter than this are stored raw (`Log.Options.rawPayloadLimit`).
    var rawPayloadLimit: Int
    /// The tier of appends that do not name one.
    var durability: Durability
    /// Nothing may be written: appends, flushes and checkpoint installs throw.
    var readOnly: Bool
}
