import ArgumentParser
import Hearth

/// `hearth compact STORE`: checkpoint, prune and drop dead segments now.
struct CompactCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "compact",
        abstract:
            "Checkpoint, prune (if over the cap) and drop dead segments now; print the footprint before and after.",
        discussion: "Opens the store (taking its lock; recovery may truncate a torn tail)."
    )

    @OptionGroup var options: CappedStoreArguments

    func run() throws {
        // The footprint before opening: opening may already run maintenance.
        let initial = (try? LogScan(directory: options.store))?.footprintBytes()
        let store = try StoreAccess.open(options.store, cacheSizeBytes: options.cacheSize)
        var (before, after) = try store.compact()
        before = initial ?? before
        try store.close()
        let out = Output()
        if options.json {
            out.json(["footprintBefore": Render.int(before), "footprintAfter": Render.int(after)])
        } else {
            out.line("footprint before: \(before) bytes")
            out.line("footprint after: \(after) bytes")
        }
    }
}
