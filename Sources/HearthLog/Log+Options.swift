// The options a store is opened with. The opener (Log+Open.swift) hands each layer below only its
// part of them (`RecoveryOptions`, `WriterSettings`), so nothing below the log's public face
// reads this type.

extension Log {
    /// How to open a store.
    public struct Options: Sendable {
        /// Segments roll once they would exceed this size (a record larger than it gets a segment of
        /// its own). Default 4 MiB.
        public var segmentSize: Int = 4 << 20
        /// The tier used by appends that do not name one. Default `.full`.
        public var durability: Durability = .full
        /// Keep the longest valid prefix on corruption, moving damaged files aside as `*.broken`,
        /// instead of failing with a typed error. Default false.
        public var salvage: Bool = false
        /// Create the directory and an empty store if missing. Default true.
        public var createIfMissing: Bool = true
        /// zlib level 1–9 for record payloads, or 0 to store every payload uncompressed (a
        /// writer's choice: readers take either, FORMAT.md §5.2). Default 6.
        public var compressionLevel: Int32 = 6
        /// Payloads shorter than this many bytes are stored uncompressed whatever
        /// `compressionLevel` says (a writer's choice, FORMAT.md §5.2): deflating a short payload
        /// costs zlib a fixed price per stream plus ~25 ns a byte — more CPU than its bytes cost
        /// to write — for a saving that lasts only as long as the record does. Default 0: every
        /// payload is offered to the compressor. Must be ≥ 0.
        public var rawPayloadLimit: Int = 0
        /// Upper bound on the bytes of one group commit (one write call). Default 1 MiB.
        public var maxBatchBytes: Int = 1 << 20
        /// Open without taking the lock and without writing anything, to read the last consistent
        /// state of a store whose directory is not writable or that another process holds open.
        ///
        /// The open runs the same scan as recovery but acts on nothing: temp and stray files stay,
        /// a torn tail is left in place and never read (``RecoveryReport/ignoredTornTail``), and
        /// appends, flushes and checkpoint installs throw ``LogError/readOnly(path:)``. Damage other
        /// than a torn tail fails the open (`salvage` is ignored), as does a directory without a
        /// store (`createIfMissing` is ignored). Under a live writer the log read is a prefix of
        /// what that writer has appended; when a checkpoint of that writer replaces the MANIFEST
        /// during the open, the open starts again (at most ``Log/verifyAttempts`` times).
        /// Default false.
        public var readOnly: Bool = false
        /// With `salvage`: a record the engine cannot replay although its checksum holds (its
        /// events do not decode, or it does not inflate): salvage cuts the log before it, as
        /// before a damaged record. The store sets it when its replay fails; nil otherwise.
        package var salvageCut: SalvageCut?

        /// Default options.
        public init() {}
    }

    /// Where salvage cuts the log (see ``SalvageCut``; named here for the engine, which sets it).
    package typealias SalvageCut = HearthLog.SalvageCut
}
