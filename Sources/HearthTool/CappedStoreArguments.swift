import ArgumentParser

/// The arguments of subcommands that open a store and measure it against the cap.
struct CappedStoreArguments: ParsableArguments {
    @Argument(help: "The store directory.")
    var store: String

    @Option(
        name: .customLong("cache-size"),
        help: ArgumentHelp(
            "The cap to compare the footprint against (default 10 MiB): compact prunes to it; stats prunes to it only when it is given.",
            valueName: "BYTES"))
    var cacheSize: Int?

    @Flag(help: "Print the result as one JSON object.")
    var json = false

    func validate() throws {
        try ApplyCommand.validateCacheSize(cacheSize)
    }
}
