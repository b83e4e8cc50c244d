// Appending a record whose payload is a head known late and a tail deflated early
// (Compression/SplitPayload.swift).

extension Log {
    /// `tail` deflated as the log would compress a record (its level; a small window for a
    /// small input), for a ``SplitPayload`` — or nil when that does not make it smaller, or the
    /// log stores such records raw (level 0, or `tail` shorter than
    /// ``Log/Options/rawPayloadLimit``). Thread-safe; takes no lock of the log's but its
    /// compressor pool's, so callers run it before their own locks.
    package func deflateTail(_ tail: [UInt8]) -> [UInt8]? {
        core.deflaters.compress(tail)
    }

    /// ``submit(_:type:skippable:durability:)`` for a payload given as a head and a tail
    /// deflated beforehand: the record is the same as for `head ‖ tail` (raw, or `compressed`
    /// holding one raw DEFLATE stream), only built without compressing under the caller's lock.
    package func submit(
        _ payload: SplitPayload, type: UInt8, skippable: Bool = false, durability: Durability? = nil
    ) throws(LogError) -> PendingAppend {
        let rec = try core.prepare(payload, type: type, skippable: skippable)
        let req = request([rec], durability)
        return PendingAppend(lsn: try core.submit(req), request: req)
    }
}
