import Foundation
import HearthLog
import HearthModel

/// The host a server redirected the database to, kept in the store directory so that the next
/// start connects there at once (Firebase keeps it per database: firebase-js-sdk in
/// `PersistentStorage` under `host:` + the database's host, firebase-ios-sdk in the user
/// defaults). One small file, `internal-host` (FORMAT.md §14), replaced atomically: written to
/// `internal-host.tmp`, synced, renamed over the old one, the directory synced — so a crash
/// leaves the old file or the new one, never a mix (and the store removes a leftover `*.tmp`
/// when it opens).
///
/// A file that cannot be read, does not parse, has an unknown version or names another database
/// is ignored (with a warning when it is damaged): the configured host is always a valid start.
struct HostCache: Sendable {
    /// The file's name in the store directory.
    static let fileName = "internal-host"
    /// The version of the file's layout (FORMAT.md §14).
    static let version = 1
    /// The most bytes read: a valid file is far smaller.
    static let maxBytes = 4_096

    let fs: any FileSystem
    let directory: String
    /// The database the file is for: its configured endpoint.
    let endpoint: ServerEndpoint

    var path: String { directory.hasSuffix("/") ? directory + Self.fileName : directory + "/" + Self.fileName }

    /// The file's bytes for `host`.
    func encode(_ host: String) -> [UInt8] {
        let json: JSONValue = .object([
            JSONMember(key: "v", value: .number(Double(Self.version))),
            JSONMember(key: "secure", value: .bool(endpoint.secure)),
            JSONMember(key: "host", value: .string(endpoint.hostHeader)),
            JSONMember(key: "ns", value: .string(endpoint.namespace)),
            JSONMember(key: "internal", value: .string(host)),
        ])
        return Array((json.serialized() + "\n").utf8)
    }

    /// The cached host, or `nil` (no file, or one for another database); `warn` hears why a
    /// damaged file was ignored.
    func load(warn: (String) -> Void) -> String? {
        let bytes: [UInt8]
        do {
            let file = try fs.open(path, mode: .readOnly)
            defer { try? file.close() }
            let size = try file.size()
            guard size <= UInt64(Self.maxBytes) else {
                warn("\(path): \(size) bytes, more than a host cache holds; ignored")
                return nil
            }
            bytes = try file.read(at: 0, count: Int(size))
        } catch {
            if error.code != .notFound { warn("\(path) could not be read (\(error)); ignored") }
            return nil
        }
        guard let text = String(validating: bytes, as: UTF8.self), let json = try? JSONValue.parse(text),
            let version = json["v"]?.doubleValue
        else {
            warn("\(path) is damaged; ignored")
            return nil
        }
        guard version == Double(Self.version) else {
            warn("\(path) has version \(version), not \(Self.version); ignored")
            return nil
        }
        guard let secure = json["secure"]?.boolValue, let host = json["host"]?.stringValue,
            let ns = json["ns"]?.stringValue, let target = json["internal"]?.stringValue,
            ServerEndpoint.isValidHost(target)
        else {
            warn("\(path) is damaged; ignored")
            return nil
        }
        // Written for another database URL: not this one's host.
        guard secure == endpoint.secure, host == endpoint.hostHeader, ns == endpoint.namespace else { return nil }
        return target
    }

    /// Keeps `host` (`nil`: removes the file), durably.
    func save(_ host: String?) throws(FileSystemError) {
        if let host {
            let temporary = path + ".tmp"
            let file = try fs.open(temporary, mode: .createTruncate)
            do {
                try file.write(encode(host), at: 0)
                try file.sync()
            } catch {
                try? file.close()
                throw error
            }
            try file.close()
            try fs.rename(from: temporary, to: path)
        } else {
            do { try fs.unlink(path) } catch  where error.code == .notFound { return }
        }
        try fs.syncDirectory(directory)
    }
}

extension Database {

    /// A server redirected the database (or it fell back to its configured host): a persistent
    /// store keeps the host for the next start. Failing to keep it costs only a redirect then.
    func keepHost(_ host: String?) {
        guard let hostCache = state.withLock({ $0.hostCache }) else { return }
        do { try hostCache.save(host) } catch {
            Database.logger(options)("the host cache \(hostCache.path) could not be written (\(error))")
        }
    }
}
