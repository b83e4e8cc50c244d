// Fixture (acyclic): a file in the module's root folder (Core/.) using both folders.
public enum Root {
    public static let high = High()
}
