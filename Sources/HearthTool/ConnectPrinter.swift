import Hearth
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `hearth connect`'s output: one JSON object per line on stdout, written (and so flushed) as
/// soon as it is printed, from any thread, whole lines only.
final class ConnectPrinter: Sendable {
    private let lock = Mutex(())

    /// Prints `{"type": type, …fields}` on one line; `echo` (the command's `id`) goes last.
    func emit(_ type: String, _ fields: [JSONMember] = [], echo: JSONValue? = nil) {
        var members = [JSONMember(key: "type", value: .string(type))] + fields
        if let echo { members.append(JSONMember(key: "id", value: echo)) }
        var bytes: [UInt8] = []
        JSONValue.object(members).write(to: &bytes)
        bytes.append(0x0A)
        lock.withLock { _ in
            var done = 0
            while done < bytes.count {
                let n = bytes.withUnsafeBytes { write(1, $0.baseAddress! + done, bytes.count - done) }
                if n < 0 {
                    if errno == EINTR { continue }
                    return  // stdout is gone (a closed pipe): nothing more can be said
                }
                done += n
            }
        }
    }
}
