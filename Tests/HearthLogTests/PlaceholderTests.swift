import Testing
@testable import HearthLog
@Test func placeholder() { #expect(Bool(true)) }
