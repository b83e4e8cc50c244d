import Hearth

/// The one query syntax of every `hearth` command that takes a query (`get --query`, `apply`'s
/// and `connect`'s `query` fields): the model's JSON form (``QuerySpec``), whose `orderBy` is
/// `"key"`, `"value"`, `"priority"` or `{"child": "a/b"}`, also taking REST's spellings —
/// `"$key"`, `"$value"`, `"$priority"`, and any other string as a child path. A word means the
/// same in every command: `"value"` orders by value everywhere, and a child named `key`,
/// `value` or `priority` is written `{"child": "value"}`.
enum ToolQuery {
    /// `json` with its `orderBy` in the model's form (other fields untouched).
    static func normalized(_ json: JSONValue) -> JSONValue {
        guard let members = json.objectMembers else { return json }
        return .object(
            members.map { m in
                guard m.key == "orderBy", let name = m.value.stringValue else { return m }
                switch name {
                case "$key", "key": return JSONMember(key: m.key, value: "key")
                case "$value", "value": return JSONMember(key: m.key, value: "value")
                case "$priority", "priority": return JSONMember(key: m.key, value: "priority")
                default: return JSONMember(key: m.key, value: ["child": .string(name)])
                }
            })
    }

    /// The query `json` describes, checked by the model's parser.
    static func spec(_ json: JSONValue) throws(QueryError) -> QuerySpec {
        try QuerySpec(json: normalized(json))
    }
}
