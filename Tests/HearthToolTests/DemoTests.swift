import Foundation
import Testing
import Hearth

/// `hearth demo` — the README's first command — end to end on a real store.
@Suite(.enabled(if: Tool.binary != nil, "the hearth binary was not found next to the tests"))
struct DemoTests {
    @Test func demoPlaysTheDocumentationStory() throws {
        let store = TempStore()
        let r = try Tool.run(["demo", "--store-only", store.path])
        #expect(r.status == 0, "\(r)")
        let out = r.stdout
        // Online: four child_added and a value event.
        #expect(out.contains("child_added    The pterodactyl dinosaur's score is 93 (after linhenykus)"))
        // Offline after the restart: last 2 without value, last 6 the four cached without value,
        // last 4 complete again.
        let sections = out.components(separatedBy: "observe(…)")
        #expect(sections.count == 5, "\(out)")
        if sections.count == 5 {
            #expect(
                sections[2].contains("linhenykus") && sections[2].contains("pterodactyl")
                    && !sections[2].contains("triceratops"))
            #expect(sections[2].contains("no value event"))
            #expect(
                sections[3].components(separatedBy: "child_added").count == 5 && sections[3].contains("no value event"))
            #expect(sections[4].contains("a value event fired"))
        }
        // Pending writes in order, survived the restart.
        #expect(
            out.contains("#1 set    players/ada") && out.contains("#2 update players/ada")
                && out.contains("#3 set    players/ada/lastSeen"))
        // Pruning under the small cap kept the pinned scores and pruned some news.
        #expect(out.contains(#"scores still cached: {"bruhathkayosaurus":55"#))
        #expect(out.contains("least recently written were pruned") && !out.contains("the 0 least"))
        // And the stats of the store, under the cap.
        #expect(out.contains("pins: 1") && out.contains("pending writes: 3"))
        #expect(try Tool.run(["verify", store.path]).status == 0)
    }

    /// The whole page with real clients over real sockets (`hearth demo`).
    @Test func demoPlaysTheWholePageWithClientsAndAServer() throws {
        let dir = TempStore()
        let r = try Tool.run(["demo", dir.path])
        #expect(r.status == 0, "\(r)")
        let out = r.stdout
        let sections = out.components(separatedBy: "\n\n")
        func section(_ n: Int) -> String { sections.first { $0.hasPrefix("\(n). ") } ?? "" }
        // 1: online, four child_added and the value.
        #expect(
            section(1).contains("The pterodactyl dinosaur's score is 93 (after linhenykus)")
                && section(1).contains("value        4 children"))
        // 2: offline after a restart: the last two from the cache with no value; the last six gives the four cached.
        #expect(
            section(2).contains("no value event") && section(2).components(separatedBy: "child_added").count == 7,
            "\(section(2))")
        // 4: back online, the final two child_added and the value; queued work delivered in order.
        #expect(
            section(4).contains("The stegosaurus dinosaur's score is 5")
                && section(4).contains("The lambeosaurus dinosaur's score is 21"))
        #expect(section(4).contains("value        6 children"))
        #expect(
            section(4).contains("transaction 1: committed") && section(4).contains("transaction 2: committed")
                && section(4).contains("visits = 2"))
        // 5: keepSynced data fresh offline after a restart.
        #expect(section(5).contains("stegosaurus = 6"))
        // 6: presence: the second client sees the first go away, with a server timestamp.
        #expect(section(6).contains("0 connection(s), lastOnline = 1"))
        // 7: the expired token held the write until the user signed in again.
        #expect(section(7).contains("held in the store, not sent") && section(7).contains("write: acknowledged"))
        #expect(out.hasSuffix("done.\n"))
    }
}
