// Where salvage cuts the log at the engine's request: a record whose checksum holds but that the
// engine cannot replay. Recovery treats it as damage at that record.

/// Where salvage cuts the log: the record at `offset` in segment `file` and all after it.
package struct SalvageCut: Sendable, Equatable {
    /// The segment file.
    package var file: String
    /// The offset of the first record not kept.
    package var offset: UInt64
    /// Why the record cannot be replayed.
    package var reason: String

    /// A cut before the record at `offset` of `file`.
    package init(file: String, offset: UInt64, reason: String) {
        self.file = file
        self.offset = offset
        self.reason = reason
    }
}
