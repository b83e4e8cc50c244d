// One caller's request in the group-commit queue.

/// A pending append (one or more records, atomically) or a flush (no records).
/// Guarded by `LogCore.monitor`: created by the caller, completed by whichever thread leads its group.
/// Every mutable field is read and written only under that monitor, which is what makes handing a
/// request from the thread that submitted it to the one that waits for it safe (`@unchecked`).
final class CommitRequest: @unchecked Sendable {
    let records: [PreparedRecord]
    /// Must be fdatasync'd before acknowledgement (`.full`, flush).
    let sync: Bool
    /// For `.batched`: the longest the data may stay unsynced, in nanoseconds.
    let batchedInterval: UInt64?
    /// Start a new segment first if the active one holds records (a checkpoint install asks
    /// for this so that a segment wholly covered by the checkpoint can be dropped).
    let roll: Bool
    let bytes: Int
    /// The LSN of the last record, fixed when the request was queued.
    var reservedLSN: LSN = 0
    var done = false
    var result: Result<LSN, LogError> = .success(0)
    /// The request's waiter sleeps on this (with the monitor's mutex); `LogCore.finish`
    /// broadcasts it when the request completes or becomes the front of the queue.
    let wake = Monitor.Condition()

    init(records: [PreparedRecord], sync: Bool, batchedInterval: UInt64?, roll: Bool = false) {
        self.records = records
        self.sync = sync
        self.batchedInterval = batchedInterval
        self.roll = roll
        bytes = records.reduce(0) { $0 + $1.extent }
    }
}
