// A payload whose tail is compressed before its head is known: the one raw DEFLATE stream a
// `compressed` record holds (FORMAT.md §5.2) built as a *stored* block carrying the head, then
// the tail's own complete stream. RFC 1951 §3.2.3–3.2.4: a stream is a sequence of blocks, the
// last one flagged final; a stored block (BTYPE 00) is its 3 header bits, padding to the next
// byte, LEN and NLEN (16 bits each, little-endian), then LEN literal bytes. A stream starts at
// bit 0 of a byte and a stored block ends on a byte boundary, so the tail's stream — whose
// first block is not final unless it is the only one, and whose last block is — follows the
// stored block byte for byte. The tail's blocks never refer back into the head (they were
// compressed without it), which a decoder allows but never requires. So the record inflates to
// exactly head ‖ tail: the same raw payload as one stream over both, no new byte on disk.
//
// Why: a committer that learns part of its payload only under a lock (the engine's write id)
// compresses the rest before taking it, so the lock is held for a copy, not for a deflate.

/// A record payload given as a head, known late, and a tail deflated early
/// (``Log/deflateTail(_:)``).
package struct SplitPayload: Sendable {
    /// The payload's first bytes (at most ``SplitPayload/maxHead``), stored as they are.
    package var head: [UInt8]
    /// The rest of the payload, raw.
    package var tail: [UInt8]
    /// `tail`'s complete raw DEFLATE stream, or nil when compressing did not pay (or the log
    /// stores records raw: level 0, or a tail under `Log.Options.rawPayloadLimit`): the record
    /// is then stored raw.
    package var deflatedTail: [UInt8]?

    /// The longest head a stored block carries (LEN is 16 bits).
    package static let maxHead = 65_535

    /// Bytes of the stored block's header: the 3 header bits padded to a byte, LEN and NLEN.
    static let storedBlockHeader = 5

    package init(head: [UInt8], tail: [UInt8], deflatedTail: [UInt8]?) {
        self.head = head
        self.tail = tail
        self.deflatedTail = deflatedTail
    }

    /// The payload's raw length: head and tail.
    package var rawCount: Int { head.count + tail.count }

    /// The stored bytes when the record is to be `compressed` (strictly smaller than the raw
    /// payload, FORMAT.md §5.2), else nil (the record is stored raw).
    func compressedStream() -> [UInt8]? {
        guard let d = deflatedTail, !d.isEmpty, head.count <= Self.maxHead else { return nil }
        let size = Self.storedBlockHeader + head.count + d.count
        guard size < rawCount else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(size)
        // BFINAL 0, BTYPE 00 (stored), padding to the byte boundary: one zero byte.
        out.append(0)
        let len = UInt16(head.count)
        out.append(UInt8(truncatingIfNeeded: len))
        out.append(UInt8(truncatingIfNeeded: len >> 8))
        out.append(UInt8(truncatingIfNeeded: ~len))
        out.append(UInt8(truncatingIfNeeded: ~len >> 8))
        out.append(contentsOf: head)
        out.append(contentsOf: d)
        assert(out.count == size, "the stream is the stored block and the tail's stream")
        return out
    }

    /// The raw payload: head ‖ tail.
    func raw() -> [UInt8] {
        var out = head
        out.append(contentsOf: tail)
        return out
    }
}
