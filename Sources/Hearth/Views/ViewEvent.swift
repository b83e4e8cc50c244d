import HearthModel

/// Which events a registration wants.
///
/// A registration created with ``value`` only receives `value` events; one created with
/// ``children`` receives the four child event kinds. Firebase's value and child listeners are
/// the two common cases; any combination is allowed.
public struct ViewEventKinds: OptionSet, Sendable, Hashable {
    /// The set's bits.
    public let rawValue: UInt8

    /// Creates a set from its raw bits.
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// `child_added`.
    public static let childAdded = ViewEventKinds(rawValue: 1 << 0)
    /// `child_removed`.
    public static let childRemoved = ViewEventKinds(rawValue: 1 << 1)
    /// `child_changed`.
    public static let childChanged = ViewEventKinds(rawValue: 1 << 2)
    /// `child_moved`.
    public static let childMoved = ViewEventKinds(rawValue: 1 << 3)
    /// `value`.
    public static let value = ViewEventKinds(rawValue: 1 << 4)
    /// Every kind.
    public static let all: ViewEventKinds = [.childAdded, .childRemoved, .childChanged, .childMoved, .value]
    /// The four child kinds.
    public static let children: ViewEventKinds = [.childAdded, .childRemoved, .childChanged, .childMoved]

    /// The set holding exactly `kind`.
    public init(_ kind: ViewEvent.Kind) {
        switch kind {
        case .childAdded: self = .childAdded
        case .childRemoved: self = .childRemoved
        case .childChanged: self = .childChanged
        case .childMoved: self = .childMoved
        case .value: self = .value
        }
    }
}

/// Identifies one listener registration. Several listens may share one registration (the same
/// callback registered for several queries at a location).
public struct RegistrationID: Hashable, Sendable, CustomStringConvertible {
    /// The caller-chosen number.
    public let rawValue: Int

    /// Creates an id.
    package init(_ rawValue: Int) { self.rawValue = rawValue }

    /// `#` and the number.
    public var description: String { "#\(rawValue)" }
}

/// One event raised to a listener.
///
/// Events come out of the `SyncTree` in the order Firebase raises them: views at deeper
/// locations before views above them; per view `child_removed`, `child_added`, `child_moved`,
/// `child_changed`, then `value`, each kind sorted by the query's index order.
public struct ViewEvent: Sendable, Equatable, CustomStringConvertible {
    /// The event type, spelled as Firebase spells it.
    public enum Kind: String, Sendable, Hashable, CaseIterable {
        /// A child left the view (for a window: it may still exist outside it).
        case childRemoved = "child_removed"
        /// A child entered the view.
        case childAdded = "child_added"
        /// A child's position in the query's order changed (always with `child_changed`).
        case childMoved = "child_moved"
        /// A child's value changed.
        case childChanged = "child_changed"
        /// The view's whole value, raised after the child events when the view is complete.
        case value
    }

    /// The event type.
    public let kind: Kind
    /// The listened location.
    public let path: Path
    /// The listened query.
    public let query: QuerySpec
    /// The registration the event is for.
    public let registration: RegistrationID
    /// The child the event is about (child events only).
    public let childKey: ChildKey?
    /// For `child_added`, `child_changed` and `child_moved`: the key of the child ordered just
    /// before this one in the view's order within the view's window (`nil` when it is first).
    /// Always `nil` for `child_removed` and `value`.
    public let previousChildKey: ChildKey?
    /// Child events: the child's node (for `child_removed`, the removed node). `value`: the
    /// view's whole node (for filtered views only the window, without the root's priority).
    public let node: Node

    /// Creates an event.
    package init(
        kind: Kind, path: Path, query: QuerySpec, registration: RegistrationID,
        childKey: ChildKey?, previousChildKey: ChildKey?, node: Node
    ) {
        self.kind = kind
        self.path = path
        self.query = query
        self.registration = registration
        self.childKey = childKey
        self.previousChildKey = previousChildKey
        self.node = node
    }

    /// A one-line rendering for logs and test failures.
    public var description: String {
        var s = "\(kind.rawValue) \(path) \(query.identifier) \(registration)"
        if let childKey { s += " \(childKey.string)" }
        if kind != .value && kind != .childRemoved { s += " prev=\(previousChildKey?.string ?? "nil")" }
        return s + " " + node.description
    }
}
