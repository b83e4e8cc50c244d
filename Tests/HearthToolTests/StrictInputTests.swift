// `hearth apply` input is exact or refused: an invalid UTF-8 sequence in a line is an error
// naming the line and the byte offset — never replaced by U+FFFD, which would let two different
// keys collapse into one.
import Foundation
import Hearth
import Testing

@Suite struct StrictInputTests {
    @Test func invalidUTF8IsRefusedWithLineAndOffset() throws {
        try #require(Tool.binary != nil, Tool.missingMessage)
        let store = TempStore()
        var input: [UInt8] = []
        input += Array(#"{"op":"serverSet","path":"a","value":1}"#.utf8) + [0x0A]
        // Line 2: "k\xc0\xaf" as a key (an overlong encoding of "/").
        input += Array(#"{"op":"serverSet","path":"k"#.utf8) + [0xC0, 0xAF] + Array(#"","value":2}"#.utf8) + [0x0A]
        // Line 3: the same bytes in a value.
        input += Array(#"{"op":"serverSet","path":"b","value":"v"#.utf8) + [0xFF] + Array(#""}"#.utf8) + [0x0A]
        let r = try Tool.run(["apply", store.path], stdinBytes: input)
        #expect(r.status == 1, "\(r)")
        let lines = try r.jsonLines()
        #expect(lines.count == 3)
        let errors = lines.compactMap { $0["error"]?.stringValue }
        #expect(errors.count == 2)
        #expect(
            errors.first?.hasPrefix("line 2:") == true && errors.first?.contains("invalid UTF-8") == true
                && errors.first?.contains("byte 27") == true, "\(errors)")
        #expect(errors.last?.hasPrefix("line 3:") == true && errors.last?.contains("byte 39") == true, "\(errors)")
        // Nothing of the refused lines reached the store.
        let state = try Tool.run(["get", store.path, "/", "--json"])
        #expect(state.status == 0)
        #expect(try state.json()["value"] == (try JSONValue.parse(#"{"a":1}"#)), "\(state)")
    }
}
