import HearthLog

// Checkpoint files a checkpoint reads chunks from (FORMAT.md §6, §7.1): a checkpoint references
// each unchanged chunk where it already is instead of copying it, so an install writes only what
// changed beside the files it keeps. What those files hold that no chunk of the current
// checkpoint reads — chunks since replaced or pruned, and each file's write chunks, order index
// runs and directory — is dead: it stays on disk as long as the file is kept. This bounds it: at
// each checkpoint, the kept files with the most dead bytes have their live chunks copied into the
// new checkpoint instead (so it no longer keeps them), until the dead bytes left come to at most
// `deadShare` of the cap. The copies are new bytes on disk beside the files they come from until
// the install deletes those, so they are taken only as far as the room the disk bound leaves the
// new file (a file whose live bytes do not fit waits for a checkpoint with more room, or for its
// chunks to die). The disk bound counts both (Store+Maintenance.swift).
//
// The number of files is bounded too, by ``Store/maxReferencedFiles``: a checkpoint file stays
// open for as long as a chunk in it is live, and a workload that changes a few chunks per
// checkpoint would otherwise keep one more small file (and descriptor) per checkpoint, as many as
// the dead-byte budget allows — hundreds under a 10 MiB cap, where iOS gives a process 256
// descriptors. Past the bound, the files with the fewest live bytes (the cheapest to copy) are
// compacted as well.

extension Store {
    /// The most dead bytes the kept checkpoint files may hold after a checkpoint, as a share of
    /// the cap.
    static let deadShare = 0.05

    /// The most earlier checkpoint files a checkpoint may reference: with its own, at most 16
    /// checkpoint files are open at once.
    static let maxReferencedFiles = 15

    /// The files whose reused chunks the next checkpoint copies rather than references: with
    /// `origins` the current checkpoint's chunks, those with the most dead bytes, until the dead
    /// bytes of the others are within ``deadShare`` — as far as their live bytes fit in
    /// `copyBudget` (the room the disk bound leaves the new file beside its other bytes).
    func filesToCompact(_ origins: ChunkOrigins, copyBudget: UInt64 = .max) -> Set<UInt64> {
        let files = [origins.checkpoint] + origins.checkpoint.referenced
        return Store.compactionPlan(
            files: files.map { ($0.id, $0.bodySize) }, chunks: origins.chunks, own: origins.checkpoint.id,
            budget: UInt64(Double(options.cacheSizeBytes) * Store.deadShare), copyBudget: copyBudget)
    }

    /// The compaction plan for `files` (id, body size) holding `chunks` (of checkpoint `own`):
    /// dead bytes per file are its body minus the stored bytes of the chunks in it; files are
    /// taken by most dead bytes first, skipping any whose live bytes exceed what is left of
    /// `copyBudget`, until the rest hold at most `budget`; then by fewest live bytes until at
    /// most `maxFiles` remain (the files the new checkpoint will reference — a bound on open
    /// files, kept whatever the copies cost: they are the smallest files).
    static func compactionPlan(
        files: [(id: UInt64, size: UInt64)], chunks: [CheckpointFormat.Chunk], own: UInt64, budget: UInt64,
        copyBudget: UInt64 = .max, maxFiles: Int = Store.maxReferencedFiles
    ) -> Set<UInt64> {
        var live: [UInt64: UInt64] = [:]
        for c in chunks { live[c.fileID(own: own), default: 0] += UInt64(c.storedLength) }
        let dead = files.map { (id: $0.id, bytes: $0.size - min($0.size, live[$0.id] ?? 0)) }
        var remaining = dead.reduce(0) { $0 + $1.bytes }
        var copyLeft = copyBudget
        var plan: Set<UInt64> = []
        for file in dead.sorted(by: { $0.bytes > $1.bytes }) where remaining > budget {
            let copied = live[file.id] ?? 0
            if copied > copyLeft { continue }
            copyLeft -= copied
            plan.insert(file.id)
            remaining -= file.bytes
        }
        let kept = files.filter { !plan.contains($0.id) }.sorted {
            (live[$0.id] ?? 0, $0.id) < (live[$1.id] ?? 0, $1.id)
        }
        for file in kept.prefix(max(0, kept.count - maxFiles)) { plan.insert(file.id) }
        assert(files.count - plan.count <= maxFiles)
        return plan
    }
}

extension Checkpoint {
    /// The body bytes of the earlier checkpoint files this one references: with its own body,
    /// what the checkpoint holds on disk.
    var referencedBytes: UInt64 { referenced.reduce(0) { $0 + $1.bodySize } }
}
