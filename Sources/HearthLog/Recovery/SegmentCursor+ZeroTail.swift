// The preallocated tail of the last segment (FORMAT.md §4.2): a writer may leave zero bytes after
// its last record, so that most syncs flush only data pages and not the file's size. A scan
// that stops at an invalid record checks whether everything from the end of the valid prefix to
// the end of the file is zero: then the log simply ends there.

extension SegmentCursor {
    /// Whether every byte from `offset` to the end of the file is zero (true when there are none).
    /// Read in bounded chunks, so a large tail costs no large allocation.
    func isAllZero(from offset: UInt64) throws(LogError) -> Bool {
        let step: UInt64 = 256 << 10
        var at = offset
        while at < reader.size {
            let n = min(step, reader.size - at)
            let bytes = try reader.bytes(at: at, count: Int(n))
            if bytes.contains(where: { $0 != 0 }) { return false }
            at += n
        }
        return true
    }
}
