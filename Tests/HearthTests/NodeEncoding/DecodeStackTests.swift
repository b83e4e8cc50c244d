import Foundation
import Testing
@_spi(HearthInternals) @testable import Hearth
import HearthLog

/// Decoding recurses once per level of nesting (and, near the top, through ChildMap's builder:
/// `NodeCodec.builderDepth`). The deepest node a decode accepts, thousands of children wide at
/// every level, still decodes on a thread with 512 KiB of stack — the default for secondary
/// threads on Apple platforms, where the store's background work runs. (With the builder at
/// every level it needed more than 512 KiB in a debug build and crashed; 416 KiB suffice now.)
@Suite struct DecodeStackTests {
    @Test func theDeepestWideNodeDecodesOnA512KiBThread() throws {
        // 63 children levels (the decoder's limit is 64), each with 4,000 leaf siblings beside
        // the next level, which is the first key: decoded deepest inside the builder's recursion.
        var node = Node.number(1)
        for level in 0..<63 {
            var children: [(key: ChildKey, value: Node)] = [(ChildKey("a"), node)]
            for i in 0..<4_000 { children.append((ChildKey("k\(level)_\(i)"), .bool(true))) }
            node = Node(children: children)
        }
        let bytes = NodeCodec.encode(node)
        let expected = node
        let done = DispatchSemaphore(value: 0)
        nonisolated(unsafe) var decodedEqual = false
        let thread = Thread {
            decodedEqual = (try? NodeCodec.decode(bytes)) == expected
            done.signal()
        }
        thread.stackSize = 512 << 10
        thread.start()
        done.wait()
        #expect(decodedEqual)
    }
}
