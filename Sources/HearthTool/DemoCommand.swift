import ArgumentParser
import Foundation
import Hearth

/// `hearth demo [DIR]`: the product documentation's offline page, played end to end with real
/// clients over real sockets against an in-process server; `--store-only` plays the offline
/// story on a bare store (the engine alone). Each step checks what it saw against the page; the
/// run ends with `N of M behaviours shown` and fails (exit 1) on any difference.
struct DemoCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract:
            "Play the documentation's offline page with real clients and a server, checking each behaviour it describes: cached queries, restarts, offline queries, queued writes and transactions, keepSynced, presence, an expiring token.",
        discussion: """
            Each step compares the events it received with what the page says and prints ✓ or ✗ \
            (with what was expected and what was seen); the run ends with "N of M behaviours \
            shown" and exits 1 if any differs. The output is the same on every run. \
            With --store-only, plays the offline story on one bare store instead: cached queries, \
            a restart, offline queries, pending writes, keepSynced under pruning. \
            The stores go in a fresh temporary directory, removed at the end unless --keep; \
            a DIR you give (it must be empty or absent) is always kept. When a behaviour differs \
            or the demo fails, the stores are kept and their directory is printed.
            """
    )

    @Argument(help: "Where to put the demo's stores (default: a fresh temporary directory); kept at the end.")
    var directory: String?

    @Flag(help: "Play the engine-only story on one store (no server, no sockets).")
    var storeOnly = false

    @Flag(help: "Keep the temporary directory of the demo's stores (and print where it is).")
    var keep = false

    func run() async throws {
        let dir =
            directory
            ?? FileManager.default.temporaryDirectory
            .appendingPathComponent("hearth-demo-\(UUID().uuidString)").path
        if FileManager.default.fileExists(atPath: dir + "/MANIFEST")
            || ((try? FileManager.default.contentsOfDirectory(atPath: dir))?.isEmpty == false)
        {
            throw ToolError.failed("\(dir) is not empty; give an empty directory")
        }
        let checklist: Checklist
        do {
            if storeOnly {
                var demo = StoreDemo(directory: dir)
                checklist = try demo.run()
            } else {
                try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
                var demo = PageDemo(directory: dir)
                checklist = try await demo.run()
            }
        } catch {
            fflush(nil)
            Output.stderr("hearth: note: the demo failed; its stores are kept in \(dir)")
            throw error
        }
        print()
        print(checklist.summary)
        fflush(nil)
        guard checklist.allShown else {
            throw ToolError(
                message:
                    "\(checklist.verdicts.count - checklist.shownCount) of \(checklist.verdicts.count) behaviours differ from the page (✗ above); the stores are kept in \(dir)",
                code: checklist.exitCode)
        }
        if keep || directory != nil {
            print("the stores are kept in \(dir)")
        } else {
            try FileManager.default.removeItem(atPath: dir)
        }
    }
}
