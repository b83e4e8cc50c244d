// Keys that differ only in Unicode normalization (`é` U+00E9 and `e` U+0301) are two data keys
// in rules too: `$variables` capture each exactly, `data.child(x)` finds the child with exactly
// that key, and `newData` keeps both children of a write.
import HearthModel
import HearthRules
import Testing

let exactKeyRules = #"""
    {
      "rules": {
        "items": {
          ".write": true,
          "$k": {
            ".validate": "newData.val() === root.child('expected').child($k).val() && newData.val() === ($k === '\u00e9' ? 1 : 2)"
          }
        },
        "count": {
          ".write": "newData.parent().child('items').hasChildren(['\u00e9', 'e\u0301'])"
        },
        "mine": { "$k": { ".read": "$k === 'e\u0301'" } }
      }
    }
    """#

/// The expected value of each key, and the same data under `mine`.
let exactKeyData = #"{"expected":{"\u00e9":1,"e\u0301":2},"mine":{"\u00e9":1,"e\u0301":2}}"#

let exactKeyRows: [Row] = [
    Row(
        name: "both keys, each with its own value, validate", rules: exactKeyRules, data: exactKeyData,
        operation: .set("items", #"{"\u00e9":1,"e\u0301":2}"#), expected: .allowed(by: "/items/.write")),
    Row(
        name: "é with e + U+0301's value is refused", rules: exactKeyRules, data: exactKeyData,
        operation: .set("items", #"{"\u00e9":2}"#), expected: .denied(by: "/items/$k/.validate")),
    Row(
        name: "e + U+0301 with é's value is refused", rules: exactKeyRules, data: exactKeyData,
        operation: .set("items", #"{"e\u0301":1}"#), expected: .denied(by: "/items/$k/.validate")),
    Row(
        name: "a set of one key validates under its own $k", rules: exactKeyRules, data: exactKeyData,
        operation: .set("items/e\u{301}", "2"), expected: .allowed(by: "/items/.write")),
    Row(
        name: "an update of both keys validates each", rules: exactKeyRules, data: exactKeyData,
        operation: .update([("items/\u{E9}", "1"), ("items/e\u{301}", "2")]), expected: .allowed(by: "/items/.write")),
    Row(
        name: "newData holds both children", rules: exactKeyRules, data: exactKeyData,
        operation: .update([("items", #"{"\u00e9":1,"e\u0301":2}"#), ("count", "2")]),
        expected: .allowed(by: "/items/.write")),
    Row(
        name: "newData missing e + U+0301 lacks it", rules: exactKeyRules, data: exactKeyData,
        operation: .update([("items", #"{"\u00e9":1}"#), ("count", "1")]), expected: .denied(by: "/count/.write")),
    Row(
        name: "$k is e + U+0301 there", rules: exactKeyRules, data: exactKeyData,
        operation: .read("mine/e\u{301}"), expected: .allowed(by: "/mine/$k/.read")),
    Row(
        name: "$k is é there, not e + U+0301", rules: exactKeyRules, data: exactKeyData,
        operation: .read("mine/\u{E9}"), expected: .denied(by: "/mine/$k/.read")),
]

@Suite struct ExactKeyRulesTests {
    @Test(arguments: exactKeyRows) func exactKeys(_ row: Row) throws { try check(row) }
}
