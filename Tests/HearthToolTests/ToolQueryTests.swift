import Hearth
import HearthDatabase
@testable import HearthTool
import Testing

/// One query syntax for every `hearth` command: `hearth connect`'s `query` field and the store
/// tools' (`get --query`, `apply`) read `orderBy` alike, so a word never means the value in one
/// and a child in another.
@Suite("hearth: one query syntax")
struct ToolQueryTests {
    func spec(_ text: String) throws -> QuerySpec { try ToolQuery.spec(JSONValue.parse(text)) }

    @Test("REST's spellings and the model's name the same orderings; other strings are child paths")
    func spellings() throws {
        #expect(try spec(#"{"orderBy":"$value"}"#) == spec(#"{"orderBy":"value"}"#))
        #expect(try spec(#"{"orderBy":"$value"}"#) == QuerySpec(orderBy: .value))
        #expect(try spec(#"{"orderBy":"$key","limitToFirst":2}"#) == QuerySpec(orderBy: .key).limitToFirst(2))
        #expect(try spec(#"{"orderBy":"$priority"}"#) == QuerySpec(orderBy: .priority))
        #expect(try spec(#"{"orderBy":"a/b"}"#) == QuerySpec(orderBy: .child(Path(keys: ["a", "b"]))))
        #expect(try spec(#"{"orderBy":{"child":"value"}}"#) == QuerySpec(orderBy: .child(Path(keys: ["value"]))))
        #expect(throws: QueryError.self) { try spec(#"{"orderBy":"$other"}"#) }
    }

    @Test("hearth connect builds the query hearth get reads: \"value\" is by value in both")
    func connectMatchesGet() throws {
        var options = Database.Options()
        options.connectAtOpen = false
        let db = try Database(url: "http://127.0.0.1:9?ns=q", options: options)
        defer { try? db.close() }
        let ref = db.reference(withPath: "scores")
        func built(_ text: String) throws -> DatabaseQuery { try ConnectJSON.query(ref, JSONValue.parse(text)) }
        #expect(try built(#"{"orderBy":"value","limitToLast":4}"#) == ref.queryOrderedByValue().queryLimited(toLast: 4))
        #expect(try built(#"{"orderBy":"value"}"#) == ref.queryOrderedByValue())
        #expect(try built(#"{"orderBy":"$key"}"#) == ref.queryOrderedByKey())
        #expect(
            try built(#"{"orderBy":{"child":"value"}}"#)
                == ref.queryOrdered(byChild: "value"))
        #expect(try built(#"{"orderBy":"a/b"}"#) == ref.queryOrdered(byChild: "a/b"))
    }
}
