#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Parses database URLs into ``ServerEndpoint`` values (see ``ServerEndpoint/init(url:)``).
enum EndpointParser {
    static func parse(_ url: String) throws(EndpointError) -> ServerEndpoint {
        guard let separator = url.firstRange(of: "://") else { throw .unsupportedScheme("") }
        let scheme = url[..<separator.lowerBound].lowercased()
        let secure: Bool
        switch scheme {
        case "ws", "http": secure = false
        case "wss", "https": secure = true
        default: throw .unsupportedScheme(String(url[..<separator.lowerBound]))
        }
        let rest = url[separator.upperBound...]
        let queryStart = rest.firstIndex(of: "?") ?? rest.endIndex
        let beforeQuery = rest[..<queryStart]
        let pathStart = beforeQuery.firstIndex(of: "/") ?? beforeQuery.endIndex
        let (host, portText) = try splitAuthority(beforeQuery[..<pathStart])
        let port = try parsePort(portText, secure: secure)

        let path = beforeQuery[pathStart...]
        if path.split(separator: "/").contains(where: { !$0.isEmpty }) { throw .pathNotRoot(String(path)) }

        let namespace: String
        if let ns = try namespaceParameter(rest[queryStart...].dropFirst()) {
            namespace = ns
        } else {
            namespace = try hostNamespace(host)
        }
        try validateNamespace(namespace)
        return ServerEndpoint(secure: secure, host: host, port: port, namespace: namespace)
    }

    /// An emulator's address as `FIREBASE_DATABASE_EMULATOR_HOST` holds it: `HOST:PORT`, an
    /// IPv6 address in brackets; no port means 80, as the SDKs' `http://HOST?ns=…` does.
    static func parseHostAndPort(_ text: String) throws(EndpointError) -> (host: String, port: Int) {
        let (host, portText) = try splitAuthority(Substring(text))
        return (host, try parsePort(portText, secure: false))
    }

    /// The host (lowercased, IPv6 without brackets) and the port's text, if any.
    static func splitAuthority(_ authority: Substring) throws(EndpointError) -> (String, Substring?) {
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { throw .invalidHost(String(authority)) }
            let address = authority[authority.index(after: authority.startIndex)..<close]
            guard isIPAddress(String(address)), address.contains(":") else { throw .invalidHost(String(authority)) }
            let after = authority[authority.index(after: close)...]
            guard after.isEmpty || after.hasPrefix(":") else { throw .invalidHost(String(authority)) }
            return (address.lowercased(), after.isEmpty ? nil : after.dropFirst())
        }
        let colon = authority.firstIndex(of: ":")
        let host = authority[..<(colon ?? authority.endIndex)]
        let labels = host.split(separator: ".", omittingEmptySubsequences: false)
        guard !host.isEmpty, host.utf8.allSatisfy(isHostByte), labels.allSatisfy({ !$0.isEmpty }) else {
            throw .invalidHost(String(host))
        }
        return (host.lowercased(), colon.map { authority[authority.index(after: $0)...] })
    }

    private static func isHostByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"):
            true
        default:
            false
        }
    }

    static func parsePort(_ text: Substring?, secure: Bool) throws(EndpointError) -> Int {
        guard let text else { return secure ? 443 : 80 }
        guard !text.isEmpty, text.utf8.count <= 5, text.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }),
            let port = Int(text), (1...65_535).contains(port)
        else { throw .invalidPort(String(text)) }
        return port
    }

    /// The last `ns` parameter's decoded value, if any (segments that are not `key=value` are
    /// ignored, as Firebase's `decodeQuery` does).
    private static func namespaceParameter(_ query: Substring) throws(EndpointError) -> String? {
        var namespace: String?
        for segment in query.split(separator: "&") {
            let parts = segment.split(separator: "=", omittingEmptySubsequences: false)
            guard parts.count == 2, PercentEncoding.decode(parts[0]) == "ns" else { continue }
            guard let value = PercentEncoding.decode(parts[1]) else { throw .invalidNamespace(String(parts[1])) }
            namespace = value
        }
        return namespace
    }

    private static func hostNamespace(_ host: String) throws(EndpointError) -> String {
        let labels = host.split(separator: ".")
        guard host != "localhost", !isIPAddress(host), labels.count >= 3 else { throw .missingNamespace(host: host) }
        return String(labels[0])
    }

    /// Firebase's key rules (`isValidKey`): not empty, none of `. # $ [ ] /`, no control
    /// characters.
    private static func validateNamespace(_ namespace: String) throws(EndpointError) {
        let forbidden: Set<Unicode.Scalar> = [".", "#", "$", "[", "]", "/"]
        let valid =
            !namespace.isEmpty
            && namespace.unicodeScalars.allSatisfy { scalar in
                !forbidden.contains(scalar) && scalar.value > 0x1F && scalar.value != 0x7F
            }
        guard valid else { throw .invalidNamespace(namespace) }
    }

    /// Whether `text` is an IPv4 address in dotted-decimal form or an IPv6 address (no zone,
    /// no brackets): what `inet_pton` accepts, on every platform the client runs on. Such a host
    /// names no namespace and is not sent as the TLS server name.
    static func isIPAddress(_ text: String) -> Bool {
        var v4 = in_addr()
        var v6 = in6_addr()
        return text.withCString { inet_pton(AF_INET, $0, &v4) == 1 || inet_pton(AF_INET6, $0, &v6) == 1 }
    }
}
