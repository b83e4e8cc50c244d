import Testing
@testable import HearthDatabase

@Suite struct DatabaseReferenceTests {
    @Test func rootHasNoKey() {
        let db = Database()
        #expect(db.reference().key == nil)
        #expect(db.reference().description == "/")
    }
}
