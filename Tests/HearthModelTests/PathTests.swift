import Testing
@testable import HearthModel

@Suite struct PathTests {
    @Test func parseAndPrint() throws {
        #expect(try Path(validating: "/a//b/").description == "a/b")
        #expect(try Path(validating: "a/b/c").keys == ["a", "b", "c"])
        #expect(try Path(validating: "").isRoot)
        #expect(try Path(validating: "///").description == "/")
        #expect(Path.root.description == "/")
    }

    /// A found by FuzzWire: a key starting with a combining mark, written after a slash, makes
    /// one grapheme cluster with it (`"/\u{34C}"`); the path split on characters kept the slash
    /// in the key, so a path's own wire form did not read back. Slashes are scalars now.
    @Test func aSlashBeforeACombiningMarkStillSeparates() throws {
        let key = "\u{34C}cor'es"
        let path = try Path(validating: key)
        #expect(path.keys == [ChildKey(key)])
        #expect(try Path(validating: "/" + path.description) == path, "the wire form, with its leading slash")
        #expect(try Path(validating: "a/" + key).keys == ["a", ChildKey(key)])
        #expect(try Path(validating: "/\u{301}/b").keys == [ChildKey("\u{301}"), "b"])
    }

    @Test func relations() throws {
        let ab = try Path(validating: "a/b")
        let abc = try Path(validating: "a/b/c")
        #expect(ab.parent == (try Path(validating: "a")))
        #expect(Path.root.parent == nil)
        #expect(ab.child("c") == abc)
        #expect(ab.appending(try Path(validating: "c/d")).description == "a/b/c/d")
        #expect(ab.contains(abc))
        #expect(ab.contains(ab))
        #expect(!abc.contains(ab))
        #expect(!(try Path(validating: "a/bb")).contains(abc))
        #expect(Path.root.contains(abc))
        #expect(ab.relativePath(to: abc) == (try Path(validating: "c")))
        #expect(abc.relativePath(to: ab) == nil)
        #expect(abc.front == "a" && abc.back == "c")
        #expect(abc.popFront.description == "b/c")
        #expect(Path.root.popFront.isRoot)
    }

    @Test(arguments: [".", "#", "$", "[", "]"])
    func invalidCharactersAreRejectedNamingTheKey(_ ch: String) {
        let key = "bad\(ch)key"
        #expect(throws: PathError.self) { try Path(validating: "ok/\(key)/x") }
        do {
            _ = try Path(validating: "ok/\(key)/x")
        } catch {
            #expect(error.description.contains(key))
            #expect(error.description.contains("ok/\(key)/x"))
        }
    }

    @Test func controlCharactersAreRejected() {
        for c in [0x00, 0x01, 0x0A, 0x1F, 0x7F] {
            let key = "a" + String(Character(Unicode.Scalar(UInt8(c)))) + "b"
            #expect(throws: PathError.self) { try ChildKey.validate(key) }
        }
        #expect(throws: PathError.emptyKey) { try ChildKey.validate("") }
        // Non-ASCII and spaces are fine.
        #expect(throws: Never.self) { try ChildKey.validate("día 1 😀") }
    }

    /// Every ASCII character in a key, against Firebase's rule written out here: the controls,
    /// DEL and `. # $ [ ] /` are refused, naming the character; everything else passes, as do
    /// multi-byte characters (whose bytes are all 0x80 or above).
    @Test func everyASCIICharacterIsCheckedByTheRule() throws {
        let refused = Set(Array(0x00...0x1F) + [0x7F] + ".#$[]/".utf8.map(Int.init))
        for c in 0x00...0x7F {
            let character = Character(Unicode.Scalar(UInt8(c)))
            let key = "a" + String(character) + "b"
            if refused.contains(c) {
                #expect(throws: PathError.invalidCharacter(key: key, character: character)) {
                    try ChildKey.validate(key)
                }
            } else {
                #expect(throws: Never.self, "0x\(String(c, radix: 16))") { try ChildKey.validate(key) }
            }
        }
        for key in ["\u{80}", "\u{7FF}", "\u{FFFF}", "\u{10FFFF}", "é.", "😀#"] {
            if key.contains(".") || key.contains("#") {
                #expect(throws: PathError.self) { try ChildKey.validate(key) }
            } else {
                #expect(throws: Never.self) { try ChildKey.validate(key) }
            }
        }
    }

    @Test func keyLengthLimit() throws {
        try ChildKey.validate(String(repeating: "a", count: 768))
        #expect(throws: PathError.keyTooLong(key: String(repeating: "a", count: 769), utf8Length: 769)) {
            try ChildKey.validate(String(repeating: "a", count: 769))
        }
        // UTF-8 bytes count, not characters: 385 × "é" = 770 bytes.
        #expect(throws: PathError.self) { try ChildKey.validate(String(repeating: "\u{E9}", count: 385)) }
    }

    @Test func depthLimit() throws {
        let ok = (0..<32).map { "k\($0)" }.joined(separator: "/")
        #expect(try Path(validating: ok).depth == 32)
        let deep = ok + "/k32"
        #expect(throws: PathError.tooDeep(path: deep, depth: 33)) { try Path(validating: deep) }
    }

    @Test func metadataKeys() throws {
        #expect(try Path(validating: ".info/connected").isInfo)
        #expect(try Path(validating: "a/.priority").isPriority)
        #expect(throws: PathError.misplacedMetadataKey(key: ".priority", path: "a/.priority/b")) {
            try Path(validating: "a/.priority/b")
        }
        #expect(throws: PathError.misplacedMetadataKey(key: ".info", path: "a/.info")) {
            try Path(validating: "a/.info")
        }
        #expect(throws: PathError.self) { try Path(validating: "a/.value") }
        #expect(throws: PathError.self) { try Path(validating: "a/.sv") }
        #expect(throws: PathError.notWritable(path: ".info/connected")) {
            try Path(validating: ".info/connected").validateWritable()
        }
        try Path(validating: "a/b").validateWritable()
    }

    @Test func ordering() throws {
        #expect(try Path(validating: "a") < Path("a/b"))
        #expect(try Path(validating: "a/2") < Path("a/10"))
        #expect(try Path(validating: "a/z") < Path("b"))
    }

    /// A path built from keys (not parsed) is checked by `validate()` with the same rules and
    /// errors, naming the whole path.
    @Test func keyBuiltPathsValidateWithTheParsedRules() {
        #expect(throws: Never.self) { try Path(keys: ["a", "b", ".priority"]).validate() }
        #expect(throws: Never.self) { try Path(keys: [".info", "connected"]).validate() }
        #expect(throws: PathError.invalidCharacter(key: "b#", character: "#", path: "a/b#/c")) {
            try Path(keys: ["a", "b#", "c"]).validate()
        }
        #expect(throws: PathError.misplacedMetadataKey(key: ".priority", path: "a/.priority/b")) {
            try Path(keys: ["a", ".priority", "b"]).validate()
        }
        let deep = Path(keys: (0..<33).map { ChildKey("k\($0)") })
        #expect(throws: PathError.tooDeep(path: deep.description, depth: 33)) { try deep.validate() }
    }
}
