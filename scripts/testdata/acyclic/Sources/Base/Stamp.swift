// Fixture (acyclic): a module below Core, part of which Core re-exports.
public typealias Stamp = Int
public struct Mark {}
