// TEMPORARY: stand-ins until the transport and values branches land (deleted at merge).
import HearthModel

extension DatabaseReference {
    func child(_ pathString: String) -> DatabaseReference {
        DatabaseReference(database: database, path: Path(keys: path.keys + pathString.split(separator: "/").map { ChildKey(String($0)) }))
    }
}

