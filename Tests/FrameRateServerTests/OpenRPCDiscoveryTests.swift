import FrameRateProtocol
import Testing

/// `rpc.discover`: the OpenRPC document, and that its result schemas match what the
/// daemon really answers (so the catalog the document is generated from cannot drift
/// from the handlers without a test failing).
@Suite struct OpenRPCDiscoveryTests {
    private func discover(_ client: TestClient) throws -> JSONValue {
        let line = try client.call(requestLine("rpc.discover", nil, id: 7))
        let reply = try JSONValue(parsing: line)
        return try #require(reply["result"], "rpc.discover failed: \(line)")
    }

    @Test func documentListsEveryMethodOnce() throws {
        let document = try discover(try ServerHarness().connect(Peers.user))
        #expect(document["openrpc"] == "1.3.2")
        #expect(document["info"]?["version"] == "unknown", "the harness's server is given no version")
        let methods = try #require(document["methods"]?.arrayValue).compactMap { $0["name"]?.stringValue }
        let notifications = try #require(document["x-notifications"]?.arrayValue).compactMap { $0["name"]?.stringValue }
        #expect(notifications == [V1Method.tick, .presented, .closed, .event, .traceRecords].map(\.rawValue))
        #expect((methods + notifications).sorted() == V1Method.allCases.map(\.rawValue).sorted())
        #expect(!methods.contains("rpc.discover"), "OpenRPC: the discover method is not listed")
    }

    @Test func paramsNestAndKeepRequiredness() throws {
        let document = try discover(try ServerHarness().connect(Peers.user))
        let register = try #require(document["methods"]?.arrayValue?.first { $0["name"] == .string(V1Method.register.rawValue) })
        #expect(register["paramStructure"] == "by-name")
        #expect(register["x-streams"] == .string(V1Method.tick.rawValue))
        let params = try #require(register["params"]?.arrayValue)
        #expect(params.compactMap { $0["name"]?.stringValue } == ["range", "display", "paused", "label", "highFrameRate", "adaptive", "timelines", "preferredFrameLatency"])
        let range = try #require(params.first)
        #expect(range["required"] == true)
        #expect(range["schema"]?["required"] == ["minimum", "maximum"])
        #expect(range["schema"]?["properties"]?["minimum"] == ["type": "number", "description": "Hz"])
        let errors = try #require(register["errors"]?.arrayValue)
        #expect(errors.first == ["code": -32602, "message": "Invalid params", "data": ["status": "INVALID_ARGUMENT"]])
        #expect(errors.contains(["code": 8, "message": "RESOURCE_EXHAUSTED", "data": ["status": "RESOURCE_EXHAUSTED"]]))
    }

    /// Each unary method's real result has exactly the members its schema declares (every
    /// required one, nothing undeclared), one level down for nested objects and array items.
    @Test func resultSchemasMatchRealResults() throws {
        let server = ServerHarness()
        let client = try server.connect(Peers.root)
        let document = try discover(client)
        let schemas = Dictionary(
            uniqueKeysWithValues: try #require(document["methods"]?.arrayValue).compactMap { method in
                method["name"]?.stringValue.map { ($0, method["result"]?["schema"] ?? .null) }
            }
        )
        let register = try client.result(.register, #"{"range":{"minimum":30,"maximum":60,"preferred":60},"label":"l"}"#)
        let results: [(V1Method, JSONValue)] = [
            (.register, register),
            (.update, try client.result(.update, #"{"link":1,"paused":true}"#)),
            (.getState, try client.result(.getState)),
            (.setCaps, try client.result(.setCaps, #"{"lowPowerMode":true}"#)),
            (.watch, try client.result(.watch)),
            (.healthCheck, try client.result(.healthCheck)),
            (.listServices, try client.result(.listServices)),
            (.unwatch, try client.result(.unwatch, #"{"watch":1}"#)),
            (.invalidate, try client.result(.invalidate, #"{"link":1}"#)),
        ]
        for (method, result) in results {
            let schema = try #require(schemas[method.rawValue], "\(method.rawValue) is not in the document")
            expectConforms(result, to: schema, at: method.rawValue)
        }
    }

    private func expectConforms(_ value: JSONValue, to schema: JSONValue, at path: String) {
        if let items = schema["items"], let array = value.arrayValue {
            for element in array { expectConforms(element, to: items, at: path + "[]") }
            return
        }
        guard case .object(let object) = value, let properties = schema["properties"], case .object(let declared) = properties else { return }
        let required = schema["required"]?.arrayValue?.compactMap(\.stringValue) ?? []
        for name in required {
            #expect(object.contains(key: name), "\(path): the schema requires \(name), the result has \(object.keys)")
        }
        for member in object {
            guard let memberSchema = declared[member.key] else {
                Issue.record("\(path): the result has \(member.key), which the schema does not declare (\(declared.keys))")
                continue
            }
            expectConforms(member.value, to: memberSchema, at: path + "." + member.key)
        }
    }
}
