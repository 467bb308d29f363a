import FrameRateProtocol
import Testing

@Suite("JSONObject and JSONValue accessors")
struct JSONObjectTests {
    @Test func literalsKeepOrder() {
        let object: JSONObject = ["z": 1, "a": 2, "m": 3]
        #expect(object.keys == ["z", "a", "m"])
        #expect(JSONValue.object(object).jsonString == #"{"z":1,"a":2,"m":3}"#)
    }

    @Test func settingReplacesTheLastAndDropsEarlierDuplicates() throws {
        var object = try #require(try parse(#"{"a":1,"b":2,"a":3,"c":4}"#).objectValue)
        object["a"] = "x"
        #expect(JSONValue.object(object).jsonString == #"{"b":2,"a":"x","c":4}"#)
        object["d"] = .null
        #expect(object.keys == ["b", "a", "c", "d"])
        #expect(object["d"] == .null)
        object["b"] = nil
        #expect(object.keys == ["a", "c", "d"])
        object.append(key: "a", value: 9)
        #expect(object["a"] == 9)
        #expect(object.count == 4)
        #expect(object.contains(key: "c"))
        #expect(!object.contains(key: "b"))
    }

    @Test func orderMattersForEquality() throws {
        #expect(try parse(#"{"a":1,"b":2}"#) != parse(#"{"b":2,"a":1}"#))
    }

    @Test func accessors() throws {
        let value = try parse(#"{"s":"x","n":2.5,"i":7,"b":true,"z":null,"a":[1],"o":{}}"#)
        #expect(value["s"]?.stringValue == "x")
        #expect(value["n"]?.doubleValue == 2.5)
        #expect(value["n"]?.int64Value == nil)
        #expect(value["i"]?.int64Value == 7)
        #expect(value["b"]?.boolValue == true)
        #expect(value["z"]?.isNull == true)
        #expect(value["a"]?.arrayValue == [1])
        #expect(value["o"]?.objectValue?.isEmpty == true)
        #expect(value["s"]?.numberValue == nil)
        #expect(value["a"]?[0] == 1)
        #expect(value["a"]?[-1] == nil)
        #expect(value[0] == nil)
        #expect(JSONValue.string("x")["k"] == nil)
        let names = ["s", "n", "b", "z", "a", "o"].compactMap { value[$0]?.typeName }
        #expect(names == ["string", "number", "boolean", "null", "array", "object"])
    }
}
