// Fixture (acyclic): a file in the module's root folder (Core/.) using both folders. Its
// re-exports declare nothing: the name after `typealias`/`struct` is Base's, not a type of Core/.
// (Core/High, importing Base, would otherwise refer to Core/.: a cycle with Core/. -> Core/High).
@_exported import typealias Base.Stamp
@_exported import struct Base.Mark

public enum Root {
    public static let high = High()
}
