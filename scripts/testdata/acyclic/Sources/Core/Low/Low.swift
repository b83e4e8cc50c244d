// Fixture (acyclic): the bottom folder. It mentions High only where a reader would not count it:
// in this comment, in /* a block comment with /* a nested one */ High */, and in strings.
public struct Low {
    struct Options {}  // nested: counts as Low; the bare name Options declares nothing outside Low
    let options = Options()
    let label = "High \(String("High"))"
    let raw = #"High "quoted" High"#
    let multi = """
        High
        """
}

// A private type may share a name with another file's: neither is visible outside its file.
private struct Helper {}

// An extension declares nothing; naming Low here is a reference within the same folder.
extension Low {
    static let shared = Low()
}
