import Testing
@testable import HearthModel

@Suite struct NodeHashTests {
    /// Vectors from the Firebase JS SDK's `node.test.ts` ("Node.hash() works correctly").
    @Test func firebaseVectors() throws {
        let node = try Node(jsonText: #"{"intNode":4,"doubleNode":4.5623,"stringNode":"hey guys","boolNode":true}"#)
        #expect(node.hash == "6Mc4jFmNdrLVIlJJjz2/MakTK9I=")
        #expect(node.child("intNode").hash == "eVih19a6ZDz3NL32uVBtg9KSgQY=")
        let withPriorities = try Node(jsonText: #"{"root":{"c":{".value":99,".priority":"abc"},".priority":"def"}}"#)
        #expect(withPriorities.hash == "Fm6tzN4CVEu5WxFDZUdTtqbTVaA=")
    }

    @Test func emptyHashesToEmptyString() throws {
        #expect(Node.empty.hash == "")
        #expect(try Node(jsonText: "{}").hash == "")
        #expect(try Node(jsonText: #"{"a":null}"#).hash == "")
    }

    @Test func canonicalText() {
        #expect(Node.number(4).hashText() == "number:4010000000000000")
        #expect(Node.bool(true).hashText() == "boolean:true")
        #expect(Node.string("hey guys").hashText() == "string:hey guys")
        #expect(Node(.number(1), priority: .string("p")).hashText() == "priority:string:p:number:3ff0000000000000")
        #expect(
            Node(.number(1), priority: .number(2)).hashText()
                == "priority:number:4000000000000000:number:3ff0000000000000")
    }

    /// Children hash in priority order, so the same data with other priorities differs, and
    /// the hash does not depend on how the node was built.
    @Test func childrenInPriorityOrder() throws {
        let a = try Node(jsonText: #"{"x":{".value":1,".priority":2},"y":{".value":2,".priority":1}}"#)
        let text = a.hashText()
        #expect(text.hasPrefix(":y:"))
        let b = try Node(jsonText: #"{"y":{".value":2,".priority":1},"x":{".value":1,".priority":2}}"#)
        #expect(a.hash == b.hash)
        let c = try Node(jsonText: #"{"x":1,"y":2}"#)
        #expect(a.hash != c.hash)
    }
}
