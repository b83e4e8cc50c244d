// Order statistics shared by the benchmark programs.

/// The median of `xs` (NaN when empty).
public func median(_ xs: [Double]) -> Double {
    let s = xs.sorted()
    return s.isEmpty ? .nan : (s.count % 2 == 1 ? s[s.count / 2] : (s[s.count / 2 - 1] + s[s.count / 2]) / 2)
}

/// The `p`-quantile of `xs` by the nearest-rank method (NaN when empty).
public func percentile(_ xs: [Double], _ p: Double) -> Double {
    let s = xs.sorted()
    return s.isEmpty ? .nan : s[min(s.count - 1, Int(Double(s.count) * p))]
}
