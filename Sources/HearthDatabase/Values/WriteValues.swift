import Hearth
import HearthModel

// What the runtime calls to turn an app's write into nodes: `setValue`, `setValue(from:)`
// (Codable) and `updateChildValues`. Every check Firebase makes before sending happens here,
// so a refused write never reaches the store or the wire.

/// The node `value` denotes when written at `path` (absolute): arrays become children keyed
/// `"0"`, `"1"`, …; `.priority`, `.value` and `.sv` keys have Firebase's meanings; `null`
/// members are dropped.
///
/// - Throws: ``DatabaseError/invalidValue(_:)`` naming the path, for NaN or infinite numbers,
///   invalid keys, `.value` beside other children, an invalid priority or server value, a
///   string over 10 MiB, or data nested deeper than 32 levels.
func node(from value: DatabaseValue, at path: Path) throws(DatabaseError) -> Node {
    try value.node(at: path)
}

/// The node an `Encodable` value denotes when written at `path` (absolute), through
/// ``NodeEncoder`` with `options` (Firebase's defaults unless given), validated as
/// ``node(from:at:)`` validates.
///
/// - Throws: ``DatabaseError/invalidValue(_:)`` naming the coding path or the data path.
func node(
    encoding value: some Encodable, at path: Path, options: NodeEncoder.Options = .init()
) throws(DatabaseError) -> Node {
    try NodeEncoder(options: options).encode(value, at: path)
}

/// The children of an `updateChildValues` call: each key is a path relative to `path`
/// (slash-separated, empty segments ignored), each value what to write there.
///
/// Checks what Firebase checks (`validateFirebaseMergeDataArg`, `validateFirebaseMergePaths`):
/// every segment a valid key except a final `.priority`, whose value must be a valid priority
/// (null, a string, a finite number or a server value); every value valid; and no path may be
/// an ancestor of (or equal to) another — `"a"` with `"a/b"` is refused. The result is sorted
/// by path.
///
/// - Throws: ``DatabaseError/invalidPath(_:)`` for a bad key or overlapping paths,
///   ``DatabaseError/invalidValue(_:)`` for a bad value.
func childUpdates(from values: DatabaseValue.Object, at path: Path) throws(DatabaseError) -> [ChildUpdate] {
    var updates: [ChildUpdate] = []
    updates.reserveCapacity(values.count)
    for (pathKey, value) in values.members {
        let pathString = pathKey.string
        let segments = Path.segments(of: pathString)
        for (i, segment) in segments.enumerated() {
            if segment == ".priority" && i == segments.count - 1 { continue }
            do {
                try ChildKey.validate(segment)
            } catch {
                throw .invalidPath("updateChildValues: invalid key \"\(segment)\" in path \"\(pathString)\": \(error)")
            }
        }
        let relative = Path(keys: segments.map { ChildKey($0) })
        if relative.isPriority {
            switch value {
            case .null, .string, .serverValue: break
            case .int: break
            case .double(let d) where d.isFinite: break
            default:
                throw .invalidValue(
                    "updateChildValues: the value for \"\(pathString)\" must be a valid priority (a string, finite number, server value, or null)"
                )
            }
        }
        updates.append(ChildUpdate(path: relative, node: try value.node(at: path.appending(relative))))
    }
    updates.sort { $0.path < $1.path }
    // Sorted, an ancestor comes right before its descendants (and equal paths are adjacent).
    for (previous, current) in zip(updates, updates.dropFirst()) where previous.path.contains(current.path) {
        throw .invalidPath(
            "updateChildValues: the path \"\(previous.path)\" is an ancestor of (or the same as) the path \"\(current.path)\""
        )
    }
    return updates
}
