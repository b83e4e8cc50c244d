extension JSONValue {
    /// A finite number as JavaScript's `Number.prototype.toString` (and so `JSON.stringify`)
    /// prints it: the shortest round-tripping digits, in plain notation when the decimal
    /// exponent is within -6 < n ≤ 21, else in exponent notation without padding
    /// (`1e-7`, `1.5e+300`, `100000000000000000000`).
    ///
    /// Firebase's query identifiers are built with `JSON.stringify`, so Hearth prints numbers
    /// the same way to produce identical identifiers.
    ///
    /// - Precondition: `d` is finite.
    public static func javaScriptNumberText(_ d: Double) -> String {
        precondition(d.isFinite, "JSON numbers are finite")
        if d == 0 { return "0" }  // also -0, which JavaScript prints as "0"
        // Swift's description holds the shortest round-tripping digits, in either plain
        // ("4.5623", "12345.0") or exponent ("1e-07", "1.2345e+20") form.
        let text = d.magnitude.description
        var mantissa = Substring(text)
        var exponent = 0
        if let e = text.firstIndex(where: { $0 == "e" || $0 == "E" }) {
            mantissa = text[..<e]
            exponent = Int(text[text.index(after: e)...]) ?? 0
        }
        var digits: [UInt8] = []
        var pointPosition = 0
        var seenPoint = false
        for byte in mantissa.utf8 {
            if byte == UInt8(ascii: ".") {
                seenPoint = true
                continue
            }
            digits.append(byte)
            if !seenPoint { pointPosition += 1 }
        }
        // Normalize: value = 0.d1d2…dk × 10^n with d1 ≠ 0 and dk ≠ 0.
        var leading = 0
        while leading < digits.count - 1 && digits[leading] == UInt8(ascii: "0") { leading += 1 }
        digits.removeFirst(leading)
        pointPosition -= leading
        while digits.count > 1 && digits.last == UInt8(ascii: "0") { digits.removeLast() }
        let k = digits.count
        let n = pointPosition + exponent

        var out = d < 0 ? "-" : ""
        let s = String(decoding: digits, as: UTF8.self)
        if k <= n && n <= 21 {
            out += s + String(repeating: "0", count: n - k)
        } else if 0 < n && n <= 21 {
            out += String(s.prefix(n)) + "." + String(s.dropFirst(n))
        } else if -6 < n && n <= 0 {
            out += "0." + String(repeating: "0", count: -n) + s
        } else {
            let e = n - 1
            let sign = e < 0 ? "-" : "+"
            out += (k == 1 ? s : String(s.prefix(1)) + "." + String(s.dropFirst(1))) + "e" + sign + String(e.magnitude)
        }
        return out
    }
}
