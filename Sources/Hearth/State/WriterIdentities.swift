// The value of the state's writer-identity table: which writer id each of a client store's
// writes was created under (FORMAT.md §11.7).

/// The writer id each of a client store's writes was created under, for exactly-once writes:
/// the write ids cut into runs, each run created by one writer.
///
/// A sync client takes a fresh writer id each time it opens its store and makes a write
/// (``StoreBatch/saveWrite(_:at:writer:)``), so a copy of the store — restored from a backup,
/// moved to another device — never makes a new write under an id its original also uses:
/// the two share only the writes made before the copy, which carry the old ids and are the
/// same writes on both sides. A pending write keeps the id it was created under, so its
/// re-sends after a restart are still recognised.
package struct WriterIdentities: Sendable, Hashable {
    /// Write ids from `firstWriteID` up to the next run's first, created under `writer`.
    struct Run: Sendable, Hashable {
        let firstWriteID: Int64
        let writer: String
    }

    /// The runs, by strictly increasing first write id; the last one is open-ended (the
    /// writes saved from now on, until another writer begins).
    private(set) var runs: [Run] = []

    /// No writer ids: every write is unstamped.
    package init() {}

    /// The writer id write `writeID` was created under: that of the last run beginning at or
    /// below it; `nil` when it is older than every run (a write saved before the store had a
    /// writer id, sent unstamped).
    package func writer(of writeID: Int64) -> String? {
        var lo = 0, hi = runs.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if runs[mid].firstWriteID <= writeID { lo = mid + 1 } else { hi = mid }
        }
        return lo == 0 ? nil : runs[lo - 1].writer
    }

    /// The writer id of the newest writes (the last run's), if any.
    package var current: String? { runs.last?.writer }

    /// From `firstWriteID` on, writes are `writer`'s: the runs beginning there or later are
    /// replaced (events are applied in order, so the later claim wins). Nothing changes when
    /// the run that already covers `firstWriteID` is `writer`'s.
    mutating func begin(_ writer: String, from firstWriteID: Int64) {
        while let last = runs.last, last.firstWriteID >= firstWriteID { runs.removeLast() }
        if runs.last?.writer == writer { return }
        runs.append(Run(firstWriteID: firstWriteID, writer: writer))
    }

    /// Forgets the runs that can hold no pending write: those whose ids all lie below
    /// `oldest`, the oldest pending write's id (`nil`: none is pending). The last run is always
    /// kept: the writes saved from now on are its writer's until another begins.
    mutating func forgetRuns(below oldest: Int64?) {
        var drop = 0
        while drop + 1 < runs.count, oldest.map({ runs[drop + 1].firstWriteID <= $0 }) ?? true { drop += 1 }
        if drop > 0 { runs.removeFirst(drop) }
    }
}
