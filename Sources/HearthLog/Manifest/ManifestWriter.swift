// Replacing the MANIFEST atomically: write MANIFEST.tmp, sync it, rename it over MANIFEST, sync the
// directory. A crash at any step leaves either the old MANIFEST or the new one, both complete: the
// rename is atomic, and the new content was durable before the rename could become durable.
//
// The two halves fail differently. Until the rename, nothing a reader or recovery looks at has
// changed (MANIFEST.tmp is a temp file, removed by every open): a failure there leaves the store
// exactly as it was. From the rename on, the MANIFEST on disk — now or after a crash — may be
// either the old or the new one: the caller must stop (poison) rather than go on as if it knew.

enum ManifestWriter {
    static func replace(_ m: Manifest, directory: String, fs: any FileSystem) throws(LogError) {
        try writeTemp(m, directory: directory, fs: fs)
        try publishTemp(directory: directory, fs: fs)
    }

    /// The first half: MANIFEST.tmp written and synced. On failure it is removed again (best
    /// effort: on a full disk it would hold space; an open removes it anyway), and nothing
    /// durable has changed.
    static func writeTemp(_ m: Manifest, directory: String, fs: any FileSystem) throws(LogError) {
        let tmp = joinPath(directory, Layout.manifestName + Layout.tempSuffix)
        do throws(LogError) {
            try logIO {
                let f = try fs.open(tmp, mode: .createTruncate)
                defer { try? f.close() }
                try f.write(m.encode(), at: 0)
                try f.sync()
            }
        } catch {
            try? fs.unlink(tmp)
            throw error
        }
    }

    /// The second half: MANIFEST.tmp renamed over MANIFEST and the directory synced. After a
    /// failure here the MANIFEST on disk is uncertain (old or new).
    static func publishTemp(directory: String, fs: any FileSystem) throws(LogError) {
        let tmp = joinPath(directory, Layout.manifestName + Layout.tempSuffix)
        try logIO {
            try fs.rename(from: tmp, to: joinPath(directory, Layout.manifestName))
            try fs.syncDirectory(directory)
        }
    }
}
