// SourceText: a rules file as Unicode scalars, with 1-based line/column lookup.

/// A place in the rules file: 1-based line and 1-based column counted in Unicode scalars.
struct SourcePosition: Sendable, Hashable {
    var line: Int
    var column: Int
}

/// The rules file's text as scalars, so that every parser works on indices and any index
/// maps back to a line and column for error messages.
struct SourceText {
    let scalars: [Unicode.Scalar]
    /// The index of the first scalar of each line, ascending (line 1 starts at 0). A line ends
    /// at LF, CRLF or a lone CR, as editors count them.
    private let lineStarts: [Int]

    init(_ text: String) {
        scalars = Array(text.unicodeScalars)
        var starts = [0]
        for (i, s) in scalars.enumerated() {
            if s == "\n" || (s == "\r" && (i + 1 == scalars.count || scalars[i + 1] != "\n")) {
                starts.append(i + 1)
            }
        }
        lineStarts = starts
    }

    /// The line and column of the scalar at `index` (the end of the text is a valid index).
    func position(of index: Int) -> SourcePosition {
        // Binary search for the last line start ≤ index.
        var lo = 0, hi = lineStarts.count - 1
        while lo < hi {
            let mid = (lo + hi + 1) / 2
            if lineStarts[mid] <= index { lo = mid } else { hi = mid - 1 }
        }
        return SourcePosition(line: lo + 1, column: index - lineStarts[lo] + 1)
    }
}
