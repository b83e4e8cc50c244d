import NIOCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A TCP socket bound to the server's address, not yet listening: what
/// ``NetworkServer/start(listening:databases:limits:threads:)`` serves on.
///
/// Binding is its own step so that a caller can claim the port before it opens (or creates) a
/// store, and leave nothing behind when the port is taken. The socket is closed when the value
/// goes away unless a server took it.
package struct BoundSocket: ~Copyable {
    /// The address it was bound with, as given (a name or a literal address).
    package let host: String
    private var descriptor: CInt

    private init(host: String, descriptor: CInt) {
        self.host = host
        self.descriptor = descriptor
    }

    deinit {
        if descriptor >= 0 { close(descriptor) }
    }

    /// Binds `host:port` (port 0 picks a free one) with `SO_REUSEADDR`, as NIO's own bind does,
    /// so a port left in `TIME_WAIT` by a stopped server can be bound again at once.
    package static func bind(host: String, port: Int) throws(BindError) -> BoundSocket {
        let address: SocketAddress
        do { address = try SocketAddress.makeAddressResolvingHost(host, port: port) } catch {
            throw .unresolvable(host: host, reason: "\(error)")
        }
        #if canImport(Glibc)
        let stream = CInt(SOCK_STREAM.rawValue) | CInt(SOCK_CLOEXEC.rawValue)
        #else
        let stream = SOCK_STREAM
        #endif
        let descriptor = socket(address.protocol.rawValue, stream, 0)
        guard descriptor >= 0 else { throw .failed(host: host, port: port, reason: String(cString: strerror(errno))) }
        // Closed by its deinit if binding fails.
        let bound = BoundSocket(host: host, descriptor: descriptor)
        var one: CInt = 1
        let done =
            setsockopt(descriptor, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<CInt>.size)) == 0
            && address.withSockAddr { systemBind(descriptor, $0, socklen_t($1)) } == 0
        guard done else {
            let code = errno
            if code == EADDRINUSE { throw .portInUse(host: host, port: port) }
            throw .failed(host: host, port: port, reason: String(cString: strerror(code)))
        }
        return bound
    }

    /// Hands the descriptor over (the caller closes it from now on).
    consuming func release() -> CInt {
        let taken = descriptor
        descriptor = -1
        return taken
    }
}

/// bind(2) (inside ``BoundSocket`` the name is its own static method).
private func systemBind(_ descriptor: CInt, _ address: UnsafePointer<sockaddr>, _ length: socklen_t) -> CInt {
    bind(descriptor, address, length)
}

/// Why ``BoundSocket/bind(host:port:)`` failed, in one line that names the address.
package enum BindError: Error, CustomStringConvertible {
    /// Another socket is bound to the port (another server is listening there).
    case portInUse(host: String, port: Int)
    /// The host is neither an address nor a name that resolves.
    case unresolvable(host: String, reason: String)
    /// Any other failure of `socket` or `bind` (an address not on this machine, a port below
    /// 1024 without the privilege, …).
    case failed(host: String, port: Int, reason: String)

    package var description: String {
        switch self {
        case .portInUse(let host, let port):
            "port \(port) on \(host) is in use"
        case .unresolvable(let host, let reason): "cannot resolve the host \(host): \(reason)"
        case .failed(let host, let port, let reason): "cannot listen on \(host) port \(port): \(reason)"
        }
    }
}
