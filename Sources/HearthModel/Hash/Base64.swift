// Base64: RFC 4648 §4 base64 (standard alphabet, `=` padding).

/// Base64 with the standard alphabet (`A–Z a–z 0–9 + /`) and `=` padding (RFC 4648 §4).
package enum Base64 {
    private static let alphabet: [UInt8] =
        Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    /// The padded base64 text of `bytes`.
    package static func encode(_ bytes: some Collection<UInt8>) -> String {
        if let text = bytes.withContiguousStorageIfAvailable({ encode(buffer: $0) }) {
            return text
        }
        return Array(bytes).withUnsafeBufferPointer { encode(buffer: $0) }
    }

    private static func encode(buffer: UnsafeBufferPointer<UInt8>) -> String {
        var out: [UInt8] = []
        out.reserveCapacity((buffer.count + 2) / 3 * 4)
        var i = 0
        while i + 3 <= buffer.count {
            let n = UInt32(buffer[i]) << 16 | UInt32(buffer[i + 1]) << 8 | UInt32(buffer[i + 2])
            out.append(alphabet[Int(n >> 18 & 0x3F)])
            out.append(alphabet[Int(n >> 12 & 0x3F)])
            out.append(alphabet[Int(n >> 6 & 0x3F)])
            out.append(alphabet[Int(n & 0x3F)])
            i += 3
        }
        assert(buffer.count - i < 3, "fewer than 3 bytes are left after the whole blocks")
        switch buffer.count - i {
        case 1:
            let n = UInt32(buffer[i]) << 16
            out.append(alphabet[Int(n >> 18 & 0x3F)])
            out.append(alphabet[Int(n >> 12 & 0x3F)])
            out.append(contentsOf: "==".utf8)
        case 2:
            let n = UInt32(buffer[i]) << 16 | UInt32(buffer[i + 1]) << 8
            out.append(alphabet[Int(n >> 18 & 0x3F)])
            out.append(alphabet[Int(n >> 12 & 0x3F)])
            out.append(alphabet[Int(n >> 6 & 0x3F)])
            out.append(UInt8(ascii: "="))
        default:
            break
        }
        assert(out.count == (buffer.count + 2) / 3 * 4, "base64 writes 4 characters per started 3-byte block")
        return String(decoding: out, as: UTF8.self)
    }

    /// The bytes encoded by padded base64 `text`, or `nil` if `text` is not canonical
    /// RFC 4648 §4 base64.
    ///
    /// Strict: the length must be a multiple of 4; only alphabet characters, with `=` only as
    /// one or two final padding characters; the unused bits before padding must be zero;
    /// whitespace and line breaks are rejected.
    package static func decode(_ text: String) -> [UInt8]? {
        let chars = Array(text.utf8)
        guard chars.count % 4 == 0 else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(chars.count / 4 * 3)
        var i = 0
        while i < chars.count {
            let isLast = i + 4 == chars.count
            let padding: Int
            if isLast && chars[i + 3] == UInt8(ascii: "=") {
                padding = chars[i + 2] == UInt8(ascii: "=") ? 2 : 1
            } else {
                padding = 0
            }
            var n: UInt32 = 0
            for j in 0..<(4 - padding) {
                guard let v = value(of: chars[i + j]) else { return nil }
                n = n << 6 | UInt32(v)
            }
            n <<= UInt32(6 * padding)
            switch padding {
            case 0:
                out.append(UInt8(truncatingIfNeeded: n >> 16))
                out.append(UInt8(truncatingIfNeeded: n >> 8))
                out.append(UInt8(truncatingIfNeeded: n))
            case 1:
                guard n & 0xFF == 0 else { return nil }
                out.append(UInt8(truncatingIfNeeded: n >> 16))
                out.append(UInt8(truncatingIfNeeded: n >> 8))
            default:
                guard n & 0xFFFF == 0 else { return nil }
                out.append(UInt8(truncatingIfNeeded: n >> 16))
            }
            i += 4
        }
        assert(
            out.count <= chars.count / 4 * 3 && out.count + 2 >= chars.count / 4 * 3,
            "base64 reads 3 bytes per 4 characters, less at most 2 for padding")
        return out
    }

    /// The 6-bit value of an alphabet character, or `nil` (including for `=`).
    private static func value(of char: UInt8) -> UInt8? {
        switch char {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"): return char - UInt8(ascii: "A")
        case UInt8(ascii: "a")...UInt8(ascii: "z"): return char - UInt8(ascii: "a") + 26
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return char - UInt8(ascii: "0") + 52
        case UInt8(ascii: "+"): return 62
        case UInt8(ascii: "/"): return 63
        default: return nil
        }
    }
}
