import Foundation
import Testing
import Hearth

/// `hearth demo` — the README's main command — end to end on a real store.
@Suite(.enabled(if: Tool.binary != nil, "the hearth binary was not found next to the tests"))
struct DemoTests {
    @Test func demoPlaysTheDocumentationStory() throws {
        let store = TempStore()
        let r = try Tool.run(["demo", store.path])
        #expect(r.status == 0, "\(r)")
        let out = r.stdout
        // Online: four child_added and a value event.
        #expect(out.contains("child_added    The pterodactyl dinosaur's score is 93 (after linhenykus)"))
        // Offline after the restart: last 2 without value, last 6 the four cached without value,
        // last 4 complete again.
        let sections = out.components(separatedBy: "observe(…)")
        #expect(sections.count == 5, "\(out)")
        if sections.count == 5 {
            #expect(sections[2].contains("linhenykus") && sections[2].contains("pterodactyl") && !sections[2].contains("triceratops"))
            #expect(sections[2].contains("no value event"))
            #expect(sections[3].components(separatedBy: "child_added").count == 5 && sections[3].contains("no value event"))
            #expect(sections[4].contains("a value event fired"))
        }
        // Pending writes in order, survived the restart.
        #expect(out.contains("#1 set    players/ada") && out.contains("#2 update players/ada") && out.contains("#3 set    players/ada/lastSeen"))
        // Pruning under the small cap kept the pinned scores and pruned some news.
        #expect(out.contains(#"scores still cached: {"bruhathkayosaurus":55"#))
        #expect(out.contains("least recently written were pruned") && !out.contains("the 0 least"))
        // And the stats of the store, under the cap.
        #expect(out.contains("pins: 1") && out.contains("pending writes: 3"))
        #expect(try Tool.run(["verify", store.path]).status == 0)
    }
}
