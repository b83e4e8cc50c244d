import ArgumentParser
import Hearth

/// `hearth`: offline inspection and maintenance of a Hearth store.
@main
struct HearthCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "hearth",
        abstract: "Inspect and maintain Hearth stores (offline-first realtime-database persistence).",
        version: HearthInfo.version,
        subcommands: []
    )
}
