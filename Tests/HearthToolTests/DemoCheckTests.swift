import Testing

@testable import HearthTool

/// The demo's comparison: a step that sees something other than what the page says gets a ✗
/// with both lists, and the run a summary short of its count and a failing exit code.
struct DemoCheckTests {
    @Test func aDifferenceIsAFailure() {
        var checklist = Checklist()
        let page = DemoExpectations.offlineLastTwo
        // What the step prints (padded columns) is what the page says.
        let shown = checklist.check(
            page, seen: page.expected.map { "  " + $0.replacingOccurrences(of: " The", with: "  The") })
        #expect(shown.shown && shown.lines == ["✓ \(page.claim)"])
        // A value event the page says does not fire, and the children in another order.
        let seen = [page.expected[1], page.expected[0], "value 2 children: {}"]
        let differs = checklist.check(page, seen: seen)
        #expect(!differs.shown)
        #expect(
            differs.lines == [
                "✗ \(page.claim)",
                "    expected: \(page.expected[0])",
                "              \(page.expected[1])",
                "    seen:     \(seen[0])",
                "              \(seen[1])",
                "              \(seen[2])",
            ])
        #expect(checklist.summary == "1 of 2 behaviours shown")
        #expect(!checklist.allShown && checklist.exitCode == 1)
        // Nothing seen at all is a difference too.
        #expect(Verdict(behaviour: page, seen: []).lines.last == "    seen:     (nothing)")
    }

    @Test func everyBehaviourShownIsSuccess() {
        var checklist = Checklist()
        #expect(!checklist.allShown, "no behaviour checked is not a success")
        for b in [DemoExpectations.onlineLastFour, DemoExpectations.presence] { checklist.check(b, seen: b.expected) }
        #expect(checklist.allShown && checklist.exitCode == 0 && checklist.summary == "2 of 2 behaviours shown")
    }

    /// The expectations are the page's data: the last scores by value, each after the previous.
    @Test func theExpectationsAreThePage() {
        #expect(
            DemoExpectations.offlineLastTwo.expected == [
                "child_added The linhenykus dinosaur's score is 80",
                "child_added The pterodactyl dinosaur's score is 93 (after linhenykus)",
            ])
        #expect(
            DemoExpectations.onlineLastFour.expected.last
                == #"value 4 children: {"bruhathkayosaurus":55,"linhenykus":80,"pterodactyl":93,"triceratops":22}"#)
    }
}
