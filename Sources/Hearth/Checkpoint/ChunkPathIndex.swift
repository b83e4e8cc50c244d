import HearthModel

/// A checkpoint's cache chunks by the locations they lie at and under, so that reading one
/// location tests only the chunks on its way and below it (a few hash lookups), not every
/// chunk of the directory with path comparisons — the views' rebuild at open reads 100
/// locations of a checkpoint of ~200 chunks.
struct ChunkPathIndex: Sendable {
    /// Chunk indices by their path.
    private var at: [Path: [Int]] = [:]
    /// Chunk indices by every location at or above their path.
    private var atOrAbove: [Path: [Int]] = [:]

    /// Indexes `chunks` (the directory's, in order).
    init(_ chunks: [CheckpointFormat.Chunk]) {
        for (i, c) in chunks.enumerated() {
            at[c.path, default: []].append(i)
            var p = c.path
            while true {
                atOrAbove[p, default: []].append(i)
                guard let parent = p.parent else { break }
                p = parent
            }
        }
    }

    /// The indices, ascending, of the chunks at `target`, below it, or at a location above
    /// it: every chunk that can hold data of `target` or of its children
    /// (``CheckpointFormat/Chunk/isRelevant(to:)``,
    /// ``CheckpointFormat/Chunk/isRelevant(toChildren:of:)``).
    func candidates(for target: Path) -> [Int] {
        var result = atOrAbove[target] ?? []
        var p = target
        while let parent = p.parent {
            result += at[parent] ?? []
            p = parent
        }
        result.sort()
        return result
    }
}
