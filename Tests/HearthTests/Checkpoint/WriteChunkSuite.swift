@_spi(HearthInternals) import HearthLog
import HearthTesting
import Testing
@_spi(HearthInternals) @testable import Hearth

/// What the pending-write chunk suites (WriteChunkReuseTests, PreparedWriteChunkTests) share:
/// writes big enough that a few hundred fill several chunks, and the checkpoint read back.
protocol WriteChunkSuite {}

extension WriteChunkSuite {
    /// Saves one write of ~450 bytes under `/outbox` for each of `range`; returns their ids.
    func writes(_ store: Store, _ range: Range<Int>) throws -> [Int64] {
        try range.map { i in
            try store.saveWrite(
                .set(json(#"{"n":\#(i),"text":"\#(String(repeating: "pending write ", count: 30))"}"#)),
                at: Path(keys: ["outbox", ChildKey("w\(i)")]))
        }
    }

    /// The pending writes the store's current checkpoint holds, read by a fresh reader.
    func checkpointWrites(_ store: Store) throws -> [PendingWrite] {
        try CheckpointReader(try #require(store.log.checkpoint)).directory.state.writes.all()
    }
}
