// Replacing the MANIFEST atomically: write MANIFEST.tmp, sync it, rename it over MANIFEST, sync the
// directory. A crash at any step leaves either the old MANIFEST or the new one, both complete: the
// rename is atomic, and the new content was durable before the rename could become durable.

enum ManifestWriter {
    static func replace(_ m: Manifest, directory: String, fs: any FileSystem) throws(LogError) {
        let tmp = joinPath(directory, Layout.manifestName + Layout.tempSuffix)
        try logIO {
            let f = try fs.open(tmp, mode: .createTruncate)
            defer { try? f.close() }
            try f.write(m.encode(), at: 0)
            try f.sync()
            try fs.rename(from: tmp, to: joinPath(directory, Layout.manifestName))
            try fs.syncDirectory(directory)
        }
    }
}
