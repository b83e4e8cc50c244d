import HearthModel

/// TEMPORARY stand-in until the values branch lands (it replaces this file).
public struct DataSnapshot: Sendable {
    public let ref: DatabaseReference
    let node: Node
    let index: QueryIndex
    init(ref: DatabaseReference, node: Node, index: QueryIndex) {
        self.ref = ref
        self.node = node
        self.index = index
    }
    public var key: String? { ref.key }
}
