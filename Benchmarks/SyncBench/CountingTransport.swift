// A Transport that wraps the real WebSocketTransport and counts what crosses it: the UTF-8
// bytes of every whole protocol message in each direction (frame headers not included), and
// which listen requests (`q`) the server has answered.
import Foundation
import Hearth
import HearthDatabase
@_spi(HearthInternals) import HearthWire
import Synchronization

final class CountingTransport: Transport {
    struct Tally: Sendable {
        var sentBytes = 0
        var receivedBytes = 0
        var sentMessages = 0
        var receivedMessages = 0
        /// Request numbers of listens sent on the current connection, and those answered.
        var listensSent: Set<Int> = []
        var listensAnswered = 0
        /// Data pushes (`d`/`m`) received.
        var dataPushes = 0
        /// When the last listen was answered (monotonic seconds).
        var lastListenAnswer: Double = 0
    }

    let inner = WebSocketTransport()
    let tally = TallyBox()

    func reset() { tally.withLock { $0 = Tally() } }
    var snapshot: Tally { tally.withLock { $0 } }
}

/// The tally, shared by the transport and its connections.
final class TallyBox: Sendable {
    private let mutex = Mutex(CountingTransport.Tally())
    func withLock<R>(_ body: (inout CountingTransport.Tally) -> R) -> R { mutex.withLock { body(&$0) } }
}

extension CountingTransport {

    func connect(to endpoint: ServerEndpoint, lastSessionID: String?, events: @escaping @Sendable (TransportEvent) -> Void) -> any TransportConnection {
        let tally = self.tally
        let link = inner.connect(to: endpoint, lastSessionID: lastSessionID) { event in
            // The database gets the event first, so that once the tally shows a listen
            // answered, the database has queued the message (a close() after it sees it).
            events(event)
            if case .message(let text) = event {
                let bytes = text.utf8.count
                // Responses are short; the large data pushes are not parsed.
                var answered = false
                var push = false
                if bytes < 512, case let .response(number, _, _)? = try? ServerMessage.decode(text) {
                    answered = tally.withLock { $0.listensSent.contains(number) }
                } else if bytes >= 512 || text.contains("\"a\":\"d\"") || text.contains("\"a\":\"m\"")
                    || text.contains("\"a\":\"rm\"")
                {
                    push = true
                }
                let t = now()
                tally.withLock { s in
                    s.receivedBytes += bytes
                    s.receivedMessages += 1
                    if answered { s.listensAnswered += 1; s.lastListenAnswer = t }
                    if push { s.dataPushes += 1 }
                }
            }
        }
        return CountingConnection(inner: link, tally: tally)
    }
}

final class CountingConnection: TransportConnection {
    let inner: any TransportConnection
    let tally: TallyBox
    init(inner: any TransportConnection, tally: TallyBox) {
        self.inner = inner
        self.tally = tally
    }

    func send(_ message: String) {
        var listen: Int?
        if message.prefix(64).contains("\"a\":\"q\""),
            let json = try? JSONValue.parse(message), let r = json["d"]?["r"]?.doubleValue
        {
            listen = Int(r)
        }
        tally.withLock { s in
            s.sentBytes += message.utf8.count
            s.sentMessages += 1
            if let listen { s.listensSent.insert(listen) }
        }
        inner.send(message)
    }

    func close() { inner.close() }

    func setReading(_ reading: Bool) { inner.setReading(reading) }
}
