import Hearth

/// What an observer listens for (Firebase's `DataEventType`, with its raw values: code that
/// stores or switches on `rawValue` ports unchanged).
public enum DataEventType: Int, Sendable, Hashable, CaseIterable {
    /// The whole value, once at first (when the data is known) and after every change.
    case value = 4
    /// A child joined the query's window (with the key of the child before it).
    case childAdded = 0
    /// A child in the window changed (with the key of the child before it).
    case childChanged = 2
    /// A child left the window.
    case childRemoved = 1
    /// A child moved within the window's order (with the key of the child now before it).
    case childMoved = 3

    /// Firebase's order of event types within one change.
    static let raiseOrder: [DataEventType] = [.childRemoved, .childAdded, .childMoved, .childChanged, .value]

    /// The type of a view event.
    init(_ kind: ViewEvent.Kind) {
        switch kind {
        case .value: self = .value
        case .childAdded: self = .childAdded
        case .childChanged: self = .childChanged
        case .childRemoved: self = .childRemoved
        case .childMoved: self = .childMoved
        }
    }

    var viewKind: ViewEventKinds {
        switch self {
        case .value: .value
        case .childAdded: .childAdded
        case .childChanged: .childChanged
        case .childRemoved: .childRemoved
        case .childMoved: .childMoved
        }
    }
}

/// Identifies an observer, for ``DatabaseQuery/removeObserver(withHandle:)``.
public typealias DatabaseHandle = UInt
