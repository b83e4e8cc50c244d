// The event generator works only for the event types some registration wants: its output must
// be exactly what generating every type and then keeping each registration's wanted ones gives —
// the same events, in the same order.
import Testing
@testable import Hearth
import HearthModel

@Suite struct EventGeneratorKindsTests {
    /// Seeded draws below a bound.
    struct Random {
        var generator: SeededRandom
        init(state: UInt64) { generator = SeededRandom(seed: state) }
        mutating func next(_ bound: Int) -> Int { Int(generator.next() % UInt64(bound)) }
    }

    static let kindSets: [ViewEventKinds] = [
        [], .value, .childAdded, .childMoved, [.childChanged, .childMoved], .children, .all,
        [.childRemoved, .value], [.childAdded, .childChanged],
    ]

    /// The generator's answer as it was before it skipped types: every registration wanting
    /// every type, then each event kept only for the registration that wants its type.
    static func reference(
        _ generator: EventGenerator, _ changes: [Change], _ cache: IndexedNode, _ registrations: [ViewRegistration]
    ) -> [ViewEvent] {
        let everything = registrations.map { ViewRegistration(id: $0.id, kinds: .all) }
        let wants = Dictionary(uniqueKeysWithValues: registrations.map { ($0.id, $0.kinds) })
        return generator.events(for: changes, eventCache: cache, registrations: everything).filter { event in
            wants[event.registration]?.contains(ViewEventKinds(event.kind)) ?? false
        }
    }

    @Test(arguments: [QueryIndex.value, .key, .priority])
    func onlyWantedTypesAndTheSameOrder(index: QueryIndex) {
        var random = Random(state: 30)
        let generator = EventGenerator(path: "scores", query: QuerySpec(orderBy: index))
        var nonEmpty = 0
        for _ in 0..<300 {
            // A new event cache of up to 12 numeric children, and changes against it: added,
            // removed, changed (sometimes to a new value: a move under a value index), value.
            var pairs: [(key: ChildKey, value: Node)] = []
            for k in 0..<random.next(12) { pairs.append((ChildKey("k\(k)"), .number(Double(random.next(20))))) }
            let node = Node(children: pairs)
            var changes: [Change] = []
            for (key, value) in pairs {
                switch random.next(4) {
                case 0: changes.append(.added(key, value))
                case 1: changes.append(.changed(key, new: value, old: .number(Double(random.next(20)))))
                case 2: changes.append(.changed(key, new: value, old: value))
                default: break
                }
            }
            for k in 0..<random.next(3) { changes.append(.removed(ChildKey("gone\(k)"), .number(1))) }
            if random.next(2) == 0 { changes.append(.value(node)) }
            let registrations = (0..<1 + random.next(4)).map {
                ViewRegistration(id: RegistrationID($0 + 1), kinds: Self.kindSets[random.next(Self.kindSets.count)])
            }
            let cache = IndexedNode(node, index: index)
            let events = generator.events(for: changes, eventCache: cache, registrations: registrations)
            #expect(events == Self.reference(generator, changes, cache, registrations))
            if !events.isEmpty { nonEmpty += 1 }
            // A registration that wants nothing gets nothing, whatever the changes.
            let none = [ViewRegistration(id: RegistrationID(9), kinds: [])]
            #expect(generator.events(for: changes, eventCache: cache, registrations: none).isEmpty)
        }
        #expect(nonEmpty > 100, "the cases raise events")
    }
}
