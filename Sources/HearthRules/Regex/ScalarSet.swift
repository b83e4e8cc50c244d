// ScalarSet: a set of Unicode scalars as sorted ranges (a class, `.`, `\d`), and the case
// folding of the `i` flag.

/// A set of Unicode scalars: sorted, disjoint, non-adjacent ranges of scalar values, possibly
/// complemented. Classes (`[a-z_]`, `[^0-9]`), `.` and `\d \w \s \D \W \S` are all one.
struct ScalarSet: Sendable, Hashable {
    /// Sorted by lower bound, disjoint and never adjacent (``normalized(_:)``).
    let ranges: [ClosedRange<UInt32>]
    /// Whether the set is every scalar *not* in `ranges`.
    let negated: Bool

    init(_ ranges: [ClosedRange<UInt32>], negated: Bool = false) {
        self.ranges = Self.normalized(ranges)
        self.negated = negated
    }

    /// `\d`: the ASCII digits (JavaScript's `\d`, even under `i`).
    static let digits: [ClosedRange<UInt32>] = [0x30...0x39]
    /// `\w`: ASCII letters, digits and `_` (JavaScript's `\w` without the `u` flag).
    static let word: [ClosedRange<UInt32>] = [0x30...0x39, 0x41...0x5A, 0x5F...0x5F, 0x61...0x7A]
    /// `\s`: JavaScript's white space and line terminators.
    static let space: [ClosedRange<UInt32>] = [
        0x09...0x0D, 0x20...0x20, 0xA0...0xA0, 0x1680...0x1680, 0x2000...0x200A, 0x2028...0x2029,
        0x202F...0x202F, 0x205F...0x205F, 0x3000...0x3000, 0xFEFF...0xFEFF,
    ]
    /// The line terminators `.` does not match (as in JavaScript without the `s` flag).
    static let lineTerminators: [ClosedRange<UInt32>] = [0x0A...0x0A, 0x0D...0x0D, 0x2028...0x2029]
    /// `.`: any scalar but a line terminator.
    static let dot = ScalarSet(lineTerminators, negated: true)

    /// Every scalar value not in `ranges` (which must be normalized), up to U+10FFFF.
    static func complement(_ ranges: [ClosedRange<UInt32>]) -> [ClosedRange<UInt32>] {
        var out: [ClosedRange<UInt32>] = []
        var next: UInt32 = 0
        for r in ranges {
            if r.lowerBound > next { out.append(next...(r.lowerBound - 1)) }
            next = r.upperBound + 1
        }
        if next <= 0x10FFFF { out.append(next...0x10FFFF) }
        return out
    }

    /// Sorts and merges overlapping or adjacent ranges.
    static func normalized(_ ranges: [ClosedRange<UInt32>]) -> [ClosedRange<UInt32>] {
        var out: [ClosedRange<UInt32>] = []
        for r in ranges.sorted(by: { $0.lowerBound < $1.lowerBound }) {
            if let last = out.last, r.lowerBound <= last.upperBound &+ 1 {
                out[out.count - 1] = last.lowerBound...max(last.upperBound, r.upperBound)
            } else {
                out.append(r)
            }
        }
        return out
    }

    /// Whether `value` is in one of the ranges (binary search), before negation.
    private func inRanges(_ value: UInt32) -> Bool {
        var lo = 0, hi = ranges.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if ranges[mid].upperBound < value {
                lo = mid + 1
            } else if ranges[mid].lowerBound > value {
                hi = mid
            } else {
                return true
            }
        }
        return false
    }

    /// Whether the set holds `scalar`.
    func contains(_ scalar: Unicode.Scalar) -> Bool {
        inRanges(scalar.value) != negated
    }

    /// Under `i`: whether the set holds a scalar of the same case as `scalar` (see
    /// ``CaseFolding``).
    func contains(_ scalar: FoldedScalar) -> Bool {
        var found = inRanges(scalar.scalar.value)
        for variant in [scalar.variants.0, scalar.variants.1, scalar.variants.2] where !found {
            if let variant { found = inRanges(variant.value) }
        }
        return found != negated
    }
}

/// An input scalar as `i` sees it, worked out once per input position: its canonical form and
/// the other scalars of that form a class may name.
struct FoldedScalar {
    let scalar: Unicode.Scalar
    let canonical: Unicode.Scalar
    /// The canonical form and the lowercase of both, where they differ from `scalar` and share
    /// its canonical form.
    let variants: (Unicode.Scalar?, Unicode.Scalar?, Unicode.Scalar?)

    init(_ scalar: Unicode.Scalar) {
        self.scalar = scalar
        let canonical = CaseFolding.canonical(scalar)
        self.canonical = canonical
        func variant(_ v: Unicode.Scalar) -> Unicode.Scalar? {
            v != scalar && CaseFolding.canonical(v) == canonical ? v : nil
        }
        let lower = CaseFolding.lowercase(scalar)
        let lowerOfCanonical = CaseFolding.lowercase(canonical)
        variants = (
            variant(canonical), variant(lower), lowerOfCanonical == lower ? nil : variant(lowerOfCanonical)
        )
    }
}

/// The `i` flag's notion of "the same letter", JavaScript's (without the `u` flag): two
/// scalars are equal when their canonical forms are, and a scalar's canonical form is its
/// uppercase when that is one scalar and does not turn a non-ASCII scalar into an ASCII one
/// (so `ſ` is not `s`, and the Kelvin sign is not `k`); otherwise the scalar itself.
///
/// A class under `i` holds a scalar when it holds the scalar, its canonical form or the
/// lowercase of either with the same canonical form. That is JavaScript's rule for every pair
/// of cases; of the few scalars with three case forms (`µ μ Μ`, `ς σ Σ`, `ǅ ǆ Ǆ`, …) a class
/// naming only the odd one (`[µ]`, `[ς]`, `[ǅ]`) matches just that one.
enum CaseFolding {
    static func canonical(_ s: Unicode.Scalar) -> Unicode.Scalar {
        if s.value < 0x80 {
            return (0x61...0x7A).contains(s.value) ? Unicode.Scalar(UInt8(s.value - 0x20)) : s
        }
        guard let upper = single(s.properties.uppercaseMapping), upper.value >= 0x80 else { return s }
        return upper
    }

    static func lowercase(_ s: Unicode.Scalar) -> Unicode.Scalar {
        if s.value < 0x80 {
            return (0x41...0x5A).contains(s.value) ? Unicode.Scalar(UInt8(s.value + 0x20)) : s
        }
        return single(s.properties.lowercaseMapping) ?? s
    }

    /// The one scalar of `mapping`, or `nil` when it has several.
    private static func single(_ mapping: String) -> Unicode.Scalar? {
        var scalars = mapping.unicodeScalars.makeIterator()
        guard let first = scalars.next(), scalars.next() == nil else { return nil }
        return first
    }
}
