import HearthModel

extension DatabaseReference {
    /// The reference at `pathString` below this one.
    ///
    /// `pathString` is one key or several separated by `/`; leading, trailing and repeated
    /// slashes are ignored, as in Firebase (`"/a//b/"` is `a/b`). Each key must be non-empty, at
    /// most 768 UTF-8 bytes, and free of `.` `#` `$` `[` `]` and ASCII control characters. From
    /// the root, a first key `.info` is allowed: the read-only tree of connection state
    /// (`.info/connected`, `.info/serverTimeOffset`).
    ///
    /// Never throws: an invalid path (or an empty string) gives a reference that reports
    /// ``DatabaseError/invalidPath(_:)`` from every operation, as does every reference made from
    /// it with `child` or ``parent``.
    public func child(_ pathString: String) -> DatabaseReference {
        if invalid != nil { return self }
        switch DatabaseReference.parseChildPath(pathString, fromRoot: path.isRoot) {
        case .success(let keys):
            return DatabaseReference(database: database, path: Path(keys: path.keys + keys))
        case .failure(let error):
            return DatabaseReference(database: database, path: .root, invalid: error)
        }
    }

    /// The parent location, or `nil` at the root. (An invalid reference's parent is itself,
    /// still invalid.)
    public var parent: DatabaseReference? {
        if invalid != nil { return self }
        return path.parent.map { DatabaseReference(database: database, path: $0) }
    }

    /// The root of the database.
    public var root: DatabaseReference { DatabaseReference(database: database, path: .root) }

    /// Whether the location lies under `.info`, the read-only tree of connection state: it
    /// can be read and observed, never written.
    var isInfo: Bool { path.isInfo }

    /// The location's URL: `rootURL` (the database's, such as
    /// `https://demo.firebaseio.com`) followed by each key percent-encoded as JavaScript's
    /// `encodeURIComponent` encodes it, as Firebase's `url` is built (the root is `rootURL`
    /// without a trailing slash).
    func url(rootURL: String) -> String {
        var url = rootURL
        while url.hasSuffix("/") { url.removeLast() }
        for key in path.keys { url += "/" + DatabaseReference.percentEncoded(key.string) }
        return url
    }

    /// `s` percent-encoded as `encodeURIComponent` does: everything but `A–Z a–z 0–9 - _ . ! ~
    /// * ' ( )` as `%XX` of its UTF-8 bytes.
    static func percentEncoded(_ s: String) -> String {
        var out = ""
        for byte in s.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"),
                UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."), UInt8(ascii: "!"),
                UInt8(ascii: "~"), UInt8(ascii: "*"), UInt8(ascii: "'"), UInt8(ascii: "("), UInt8(ascii: ")"):
                out.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                let hex = Array("0123456789ABCDEF".unicodeScalars)
                out.unicodeScalars.append("%")
                out.unicodeScalars.append(hex[Int(byte >> 4)])
                out.unicodeScalars.append(hex[Int(byte & 0xF)])
            }
        }
        return out
    }

    /// The keys of a relative path string given to `child` (Firebase's `validatePathString`, or
    /// `validateRootPathString` from the root, plus Hearth's key-length limit).
    static func parseChildPath(_ pathString: String, fromRoot: Bool) -> Result<[ChildKey], DatabaseError> {
        if pathString.isEmpty {
            return .failure(.invalidPath("child: the path must be a non-empty string"))
        }
        let segments = Path.segments(of: pathString)
        var keys: [ChildKey] = []
        keys.reserveCapacity(segments.count)
        for (i, segment) in segments.enumerated() {
            // Firebase allows `^/*\.info(/|$)` from the root: `.info` as the first key.
            if fromRoot && i == 0 && segment == ".info" {
                keys.append(ChildKey(segment))
                continue
            }
            do {
                try ChildKey.validate(segment)
            } catch {
                return .failure(.invalidPath("child(\"\(pathString)\"): \(error)"))
            }
            keys.append(ChildKey(segment))
        }
        return .success(keys)
    }
}
