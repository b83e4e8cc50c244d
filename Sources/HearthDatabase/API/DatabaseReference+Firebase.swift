import HearthModel

extension DatabaseReference {
    /// The reference itself: Firebase's `DatabaseReference` inherits `ref` from its query class,
    /// so code that reads a query's ``DatabaseQuery/ref`` reads a reference's too.
    public var ref: DatabaseReference { self }

    /// Firebase's `url`: where the data is — the server's URL (`https://`, or `http://` in the
    /// clear; an emulator's when one is in use) with the path, each key percent-encoded, and
    /// `?ns=` when the host does not name the database (`http://127.0.0.1:9000/users/ada?ns=demo`).
    public var url: String { database.endpoint.url(of: path) }
}

extension ServerEndpoint {
    /// The URL of `path` on this server (``DatabaseReference/url``).
    func url(of path: Path) -> String {
        let keys = path.keys.map { PercentEncoding.encode($0.string) }.joined(separator: "/")
        let labels = host.split(separator: ".")
        let named = labels.count >= 3 && labels[0] == namespace
        return (secure ? "https://" : "http://") + hostHeader + "/" + keys
            + (named ? "" : "?ns=" + PercentEncoding.encode(namespace))
    }
}
