// Read-only access to a store's checkpoint for tooling (`hearth verify`): no lock, no recovery.

extension Log {
    /// Opens the checkpoint the MANIFEST names, read-only, without taking the store's lock or
    /// running recovery (for tools; run it on a store no one is writing to). Verifies the
    /// MANIFEST and the checkpoint header exactly as ``verify(directory:fileSystem:)`` does;
    /// the body is read on demand. Returns nil when the store has no checkpoint.
    public static func openCheckpoint(directory: String, fileSystem: any FileSystem = POSIXFileSystem()) throws(LogError) -> Checkpoint? {
        guard fileSystem.directoryExists(directory) else { throw .storeMissing(path: directory) }
        let names = try logIO { try fileSystem.listDirectory(directory) }
        guard names.contains(Layout.manifestName) else { return nil }
        let manifest = try Manifest.decode(try Scanner.readWhole(
            fileSystem, directory, Layout.manifestName,
            limit: Layout.manifestFixedSize + 4 + Layout.manifestEntrySize * Layout.maxManifestSegments))
        guard let ref = manifest.checkpoint else { return nil }
        let name = Layout.checkpointName(ref.id)
        let header = try Scanner.verifyCheckpointHeader(fileSystem, directory, ref, exists: names.contains(name))
        let file = try logIO { try fileSystem.open(joinPath(directory, name), mode: .readOnly) }
        return Checkpoint(header: header, file: file)
    }
}
