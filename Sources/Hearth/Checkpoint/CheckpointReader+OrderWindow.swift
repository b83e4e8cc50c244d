import HearthModel

// The children a window by child, by value or by priority needs, found from the checkpoint's
// order index for that location and ordering (body format 5, CheckpointFormat+OrderIndex.swift):
// its runs are in the ordering's order, so the last (or first) children lie in the last (or
// first) runs — a `orderByChild("ts").limitToLast(50)` over 100,000 cached children reads one
// run of the index, then the chunks holding those 50 children.

extension CheckpointReader {
    /// The order index of `parent`'s children by `index`, if the checkpoint holds one.
    func orderIndex(at parent: Path, by index: QueryIndex) -> Int? {
        directory.orderIndexes.firstIndex { $0.path == parent && $0.index == index }
    }

    /// The children of `parent` in the checkpoint, with the values `query` orders them by (as
    /// stored: ``CheckpointFormat/storedIndexValue(_:)``), that a limited `query` ordered by
    /// other than the key can select, given that `margin` children may be changed or removed by
    /// server events not in the checkpoint: at least `limit + margin` children in the query's
    /// range from the limit's end, or every child in range. `nil` when the checkpoint has no
    /// order index for `parent` and the query's ordering, or the query is not limited.
    ///
    /// Only the index runs walked are read (each checked against its CRC and for order,
    /// within the run and against the run beside it).
    /// - Throws: ``CheckpointError/corrupt(file:offset:reason:)`` for a damaged run.
    func orderWindow(
        of parent: Path, query: QuerySpec, margin: Int
    ) throws(CheckpointError) -> [(key: ChildKey, value: Node)]? {
        guard let limit = query.limit, query.index != .key, let i = orderIndex(at: parent, by: query.index) else {
            return nil
        }
        let index = directory.orderIndexes[i]
        let fromEnd: Bool = if case .last = limit { true } else { false }
        let needed = limit.count + margin
        var found: [(key: ChildKey, value: Node)] = []
        var previous: (key: ChildKey, value: Node)?
        for r in fromEnd ? Array(index.runs.indices.reversed()) : Array(index.runs.indices) {
            let entries = try orderIndexRun(i, r)
            guard let first = entries.first, let last = entries.last else { continue }
            // Runs are consecutive in the ordering: a run read after another lies wholly on its
            // far side.
            if let previous {
                let c =
                    fromEnd
                    ? CheckpointFormat.compareIndexed(last, previous) : CheckpointFormat.compareIndexed(previous, first)
                if c >= 0 { throw corruptIndex(i, r, "not in order with the run beside it") }
            }
            previous = fromEnd ? first : last
            for entry in fromEnd ? Array(entries.reversed()) : entries
            where query.inRange(entry.key, indexedValue: entry.value) {
                found.append(entry)
                if found.count >= needed { return found }
            }
        }
        return found
    }

    /// Run `r` of order index `i`: read, checked and decoded.
    func orderIndexRun(_ i: Int, _ r: Int) throws(CheckpointError) -> [(key: ChildKey, value: Node)] {
        let index = directory.orderIndexes[i]
        let run = index.runs[r]
        let raw = try CheckpointChunkBytes.read(
            checkpoint, offset: run.offset, storedLength: run.storedLength, rawLength: run.rawLength,
            compressed: run.compressed, crc: run.crc, corrupt: { corruptIndex(i, r, $0) })
        do { return try CheckpointFormat.decodeOrderIndexRun(raw, count: run.count) } catch {
            throw corruptIndex(i, r, "\(error)")
        }
    }

    private func corruptIndex(_ i: Int, _ r: Int, _ reason: String) -> CheckpointError {
        let index = directory.orderIndexes[i]
        return .corrupt(
            file: checkpoint.fileName, offset: index.runs[r].offset,
            reason: "order index by \(index.index) at \(index.path), run \(r): \(reason)")
    }

    /// Verifies every order index run's checksum, decoding and order (for `hearth verify`).
    func verifyOrderIndexes() throws(CheckpointError) {
        for i in directory.orderIndexes.indices {
            var previous: (key: ChildKey, value: Node)?
            for r in directory.orderIndexes[i].runs.indices {
                let entries = try orderIndexRun(i, r)
                if let previous, let first = entries.first, CheckpointFormat.compareIndexed(previous, first) >= 0 {
                    throw corruptIndex(i, r, "not in order with the run before it")
                }
                previous = entries.last ?? previous
            }
        }
    }
}

extension CheckpointReader {
    /// Decodes the directory's order index entries (format 5), each run wholly in the body
    /// before the directory (`bodyEnd`), at most one index per location and ordering.
    static func decodeOrderIndexes(
        _ r: inout ByteReader, bodyEnd: UInt64
    ) throws(DecodeError) -> [CheckpointFormat.OrderIndex] {
        var indexes: [CheckpointFormat.OrderIndex] = []
        var seen = Set<CheckpointFormat.OrderIndex.Target>()
        let n = try r.count(limit: r.remaining)
        for _ in 0..<n {
            let path = try EventCodec.path(&r)
            let index = try EventCodec.query(&r).index
            guard index != .key else { throw r.fail("order index by key at \(path)") }
            guard seen.insert(CheckpointFormat.OrderIndex.Target(path: path, index: index)).inserted else {
                throw r.fail("two order indexes by \(index) at \(path)")
            }
            let runCount = try r.count(limit: r.remaining)
            var runs: [CheckpointFormat.OrderIndex.Run] = []
            for _ in 0..<runCount {
                let count = try r.count(limit: Int(Int32.max))
                let offset = try r.varint()
                let stored = try r.count(limit: Int(Int32.max))
                let rawLength = try r.count(limit: 256 << 20)
                let compressed = try r.bool()
                let crc = try r.u32()
                guard count >= 1 else { throw r.fail("empty order index run at \(path)") }
                guard offset <= bodyEnd, UInt64(stored) <= bodyEnd - offset else {
                    throw r.fail("order index run \(offset)+\(stored) beyond the chunk area (\(bodyEnd) bytes)")
                }
                runs.append(
                    CheckpointFormat.OrderIndex.Run(
                        count: count, offset: offset, storedLength: stored, rawLength: rawLength,
                        compressed: compressed, crc: crc))
            }
            indexes.append(CheckpointFormat.OrderIndex(path: path, index: index, runs: runs))
        }
        return indexes
    }
}
