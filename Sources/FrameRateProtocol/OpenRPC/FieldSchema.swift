/// Turns ``ServiceCatalog`` fields into JSON Schema (draft 7 subset), for the OpenRPC
/// document: the one translation of the catalog's field notation.
///
/// - `range` (`object`) with `range.minimum` and `range.maximum` becomes an object
///   schema with those properties, `required` listing the required ones;
/// - `displays` (`array`) with `displays[].id` becomes an array whose items are objects
///   with an `id` property; `array of number` is an array of numbers;
/// - `or null` allows `null`, `(…)` becomes the description, `: a | b` an `enum`.
public enum FieldSchema {
    /// The schema of an object whose members are `fields` (dotted names nest).
    public static func object(_ fields: [ServiceCatalog.Field], description: String? = nil) -> JSONValue {
        let root = Node(type: "object")
        for field in fields { root.insert(field) }
        var schema = root.schema
        if let description, case .object(var object) = schema {
            object["description"] = .string(description)
            schema = .object(object)
        }
        return schema
    }

    /// The top-level members of `fields`, each with its schema (nested members folded
    /// in) and whether it is required, in catalog order.
    public static func members(_ fields: [ServiceCatalog.Field]) -> [(name: String, required: Bool, schema: JSONValue)] {
        let root = Node(type: "object")
        for field in fields { root.insert(field) }
        return root.order.compactMap { name in
            root.properties[name].map { (name, $0.required, $0.schema) }
        }
    }

    /// One field and the members below it.
    private final class Node {
        let type: String
        var required = false
        var properties: [String: Node] = [:]
        var order: [String] = []
        var items: Node?

        init(type: String) { self.type = type }

        func insert(_ field: ServiceCatalog.Field) {
            var node = self
            let segments = field.name.split(separator: ".").map(String.init)
            for (index, segment) in segments.enumerated() {
                let isArray = segment.hasSuffix("[]")
                let name = isArray ? String(segment.dropLast(2)) : segment
                let isLast = index == segments.count - 1
                let child = node.child(name, type: isLast ? field.type : (isArray ? "array" : "object"))
                if isLast {
                    child.required = field.required
                } else if isArray {
                    if child.items == nil { child.items = Node(type: "object") }
                    node = child.items ?? child
                } else {
                    node = child
                }
            }
        }

        private func child(_ name: String, type: String) -> Node {
            if let existing = properties[name] { return existing }
            let node = Node(type: type)
            properties[name] = node
            order.append(name)
            return node
        }

        var schema: JSONValue {
            let notation = Notation(type)
            var object: JSONObject = [:]
            object["type"] = notation.nullable ? .array([.string(notation.base), "null"]) : .string(notation.base)
            if let description = notation.description { object["description"] = .string(description) }
            if !notation.choices.isEmpty { object["enum"] = .array(notation.choices.map { .string($0) }) }
            if notation.base == "object", !order.isEmpty {
                object["properties"] = .object(JSONObject(order.compactMap { name in properties[name].map { .init(key: name, value: $0.schema) } }))
                let required = order.filter { properties[$0]?.required == true }
                if !required.isEmpty { object["required"] = .array(required.map { .string($0) }) }
            }
            if notation.base == "array" {
                if let items {
                    object["items"] = items.schema
                } else if let itemBase = notation.itemBase {
                    object["items"] = ["type": .string(itemBase)]
                }
            }
            return .object(object)
        }
    }

    /// A field's `type` notation, parsed: `base[ of item][ or null][ (description)][: a | b]`
    /// (the description may hold any text but parentheses).
    struct Notation {
        let base: String
        let itemBase: String?
        let nullable: Bool
        let description: String?
        let choices: [String]

        init(_ type: String) {
            var text = Substring(type)
            // The description first: it may itself hold ": ".
            if let open = text.firstIndex(of: "("), let close = text.lastIndex(of: ")"), open < close {
                description = String(text[text.index(after: open)..<close])
                text = text[..<open] + text[text.index(after: close)...]
            } else {
                description = nil
            }
            if let colon = text.firstIndex(of: ":") {
                choices = text[text.index(after: colon)...].split(separator: "|").map { $0.trimmingSpaces }
                text = text[..<colon]
            } else {
                choices = []
            }
            var words = text.split(separator: " ").map(String.init)
            nullable = words.suffix(2) == ["or", "null"]
            if nullable { words.removeLast(2) }
            base = words.first ?? "object"
            itemBase = words.count == 3 && words[1] == "of" ? words[2] : nil
        }
    }
}

extension Substring {
    fileprivate var trimmingSpaces: String {
        String(drop { $0 == " " }.reversed().drop { $0 == " " }.reversed())
    }
}
