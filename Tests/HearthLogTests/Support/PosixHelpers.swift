// Small POSIX helpers for tests that use the real file system.
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

func fileMode(_ path: String) -> Int {
    var st = stat()
    guard stat(path, &st) == 0 else { return -1 }
    return Int(st.st_mode & 0o777)
}

/// Removes a directory tree created by a test (depth-bounded).
func removeTree(_ path: String, depth: Int = 0) {
    guard depth < 8, let d = opendir(path) else { unlink(path); return }
    var names: [String] = []
    while let e = readdir(d) {
        let n = withUnsafeBytes(of: e.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        if n != "." && n != ".." { names.append(n) }
    }
    closedir(d)
    for n in names {
        let p = path + "/" + n
        var st = stat()
        if lstat(p, &st) == 0 && (st.st_mode & S_IFMT) == S_IFDIR { removeTree(p, depth: depth + 1) } else { unlink(p) }
    }
    rmdir(path)
}
