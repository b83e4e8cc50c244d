/// A client's writer id for exactly-once writes (``WriteStamp``): 128 random bits as 32
/// lowercase hex digits, fresh for each incarnation of a store — each time the runtime opens it
/// (a memory-only database's store lives as long as the process). It goes into the store with
/// the incarnation's first write (``StoreBatch/saveWrite(_:at:writer:)``), so opening costs
/// nothing, and only the writes made from then on carry it: writes left pending by an earlier
/// incarnation keep theirs (``WriterIdentities``), so their re-sends are still recognised.
///
/// Why fresh each time: a store restored from a backup or copied to another device shares with
/// its original only the writes made before the copy, under the ids they had then. Had the copy
/// kept its original's id, its new writes — numbered from the same point as the original's —
/// would be taken by the server for writes it had already applied, answered `seen` and never
/// applied.
enum WriterIdentity {
    /// A fresh id from two draws of `random`, which must be a real random source (the
    /// system's) outside simulations: two incarnations with one id would have each other's
    /// writes taken for duplicates.
    static func make(_ random: () -> UInt64) -> String {
        func hex(_ v: UInt64) -> String {
            let s = String(v, radix: 16)
            return String(repeating: "0", count: 16 - s.count) + s
        }
        return hex(random()) + hex(random())
    }
}
