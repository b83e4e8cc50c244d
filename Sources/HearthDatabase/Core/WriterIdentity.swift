import Hearth

/// A client store's writer id for exactly-once writes (``WriteStamp``): 128 random bits as 32
/// lowercase hex digits, created once per store and kept in it (a memory-only database's
/// store lives as long as the process, so its id does too).
public enum WriterIdentity {
    /// The store's writer id, creating and committing one first if it has none.
    ///
    /// `random` must be a real random source (the system's) outside simulations: two stores
    /// with one id would have each other's writes taken for duplicates.
    /// - Throws: ``StoreError`` when the id cannot be committed.
    public static func load(_ store: Store, random: () -> UInt64) throws(StoreError) -> String {
        if let id = store.writerID() { return id }
        let id = make(random)
        try store.commit { (b: inout StoreBatch) throws(StoreError) in try b.setWriterIdentity(id) }
        return id
    }

    /// A fresh id from two draws of `random`.
    static func make(_ random: () -> UInt64) -> String {
        func hex(_ v: UInt64) -> String {
            let s = String(v, radix: 16)
            return String(repeating: "0", count: 16 - s.count) + s
        }
        return hex(random()) + hex(random())
    }
}
