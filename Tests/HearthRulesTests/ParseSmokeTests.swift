import HearthModel
import HearthRules
import Testing

@Suite struct ParseSmokeTests {
    @Test func aDocumentedRulesFileParses() throws {
        let rules = try RulesSet.parse(source: """
            // Firebase's user-data example
            { "rules": { "users": { "$uid": {
                ".read": "auth != null && auth.uid == $uid",
                ".write": "auth != null && auth.uid == $uid" } } } }
            """)
        #expect(rules.ruleCount == 2)
    }
}
