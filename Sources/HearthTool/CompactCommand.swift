import ArgumentParser
import Hearth

/// `hearth compact STORE`: checkpoint, prune and drop dead segments now.
struct CompactCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "compact",
        abstract: "Checkpoint, prune (if over the cap) and drop dead segments now; print the footprint before and after.",
        discussion: "Opens the store (taking its lock; recovery may truncate a torn tail)."
    )

    @Argument(help: "The store directory.")
    var store: String

    @Option(name: .customLong("cache-size"), help: ArgumentHelp("The cap to prune to (default 10 MiB).", valueName: "BYTES"))
    var cacheSize: Int?

    @Flag(help: "Print the result as one JSON object.")
    var json = false

    func validate() throws {
        try ApplyCommand.validateCacheSize(cacheSize)
    }

    func run() throws {
        // The footprint before opening: opening may already run maintenance.
        let initial = (try? LogScan(directory: self.store))?.footprintBytes()
        let store = try StoreAccess.open(self.store, cacheSizeBytes: cacheSize)
        var (before, after) = try store.compact()
        before = initial ?? before
        try store.close()
        let out = Output()
        if json {
            out.json(["footprintBefore": Render.int(before), "footprintAfter": Render.int(after)])
        } else {
            out.line("footprint before: \(before) bytes")
            out.line("footprint after: \(after) bytes")
        }
    }
}
