#if canImport(SwiftUI)
import SwiftUI

/// A SwiftUI property wrapper over a ``LiveSnapshot`` (in the spirit of Firestore's
/// `@FirestoreQuery`): the view shows the query's data and updates on every change.
///
/// ```
/// struct Scores: View {
///     @LiveQuery(db.reference(withPath: "scores")) var scores
///     var body: some View { Text("\(scores?.childrenCount ?? 0) scores") }
/// }
/// ```
///
/// `$scores` is the ``LiveSnapshot`` (``LiveSnapshot/isLoading``, ``LiveSnapshot/error``).
/// The listen starts when the view's state is made and ends when SwiftUI releases it (a
/// wrapper made again for the same view, and dropped by SwiftUI, listens only briefly).
@MainActor @propertyWrapper
public struct LiveQuery: DynamicProperty {
    @State private var live: LiveSnapshot

    /// Listens to `query` for as long as the view's state lives.
    public init(_ query: some DatabaseQueryConvertible) {
        _live = State(wrappedValue: query.live())
    }

    /// The data: `nil` until it is first known.
    public var wrappedValue: DataSnapshot? { live.snapshot }

    /// The live snapshot itself.
    public var projectedValue: LiveSnapshot { live }
}
#endif
