import Testing
import TestSupport
@testable import CloudStore

@Suite struct JSONCodecTests {
    @Test func canonicalPrettyOutputSortsKeysAndKeepsIntegersApartFromDoubles() throws {
        let value = try JSONParser.parse(#"{"b": 1, "a": 1.0, "c": [1, 2.5, "x"], "d": {"z": null, "y": true}}"#)
        let text = JSONWriter.prettyString(value)
        #expect(text == """
        {
          "a": 1.0,
          "b": 1,
          "c": [1, 2.5, "x"],
          "d": {
            "y": true,
            "z": null
          }
        }

        """)
        #expect(try JSONParser.parse(text) == value)
        #expect(value["b"] == .int(1))
        #expect(value["a"] == .double(1.0))
    }

    @Test func errorsSayLineAndColumn() {
        #expect(throws: JSONParser.SyntaxError.self) { try JSONParser.parse("{\n  \"a\": 1,\n}") }
        do {
            _ = try JSONParser.parse("{\n  \"a\": 1,\n  \"b\" 2\n}")
            Issue.record("expected an error")
        } catch {
            #expect(error.line == 3)
            #expect(error.column == 7)
            #expect(error.message.contains("expected ':'"))
        }
    }

    @Test func integersPastSixtyFourBitsAreRefusedNotRounded() throws {
        #expect(try JSONParser.parse("9223372036854775807") == .int(.max))
        #expect(try JSONParser.parse("-9223372036854775808") == .int(.min))
        #expect(try JSONParser.parse("9223372036854775808.0") == .double(9223372036854775808.0))
        for big in ["9223372036854775808", "-9223372036854775809", "{\"n\": 99999999999999999999}"] {
            do {
                _ = try JSONParser.parse(big)
                Issue.record("\(big) was read")
            } catch {
                #expect(error.message.contains("does not fit in 64 bits") && error.message.contains(".0 for a DOUBLE"), "\(error.message)")
            }
        }
    }

    @Test func rejectsWhatJSONForbids() {
        for bad in ["", "{", "[1,]", "{\"a\":1,}", "01", "1.", "'x'", "{\"a\":1}{", "\"\u{01}\"", "{\"a\":1,\"a\":2}", "nul", "\"\\x\"", "[1e]", "\"\\ud800\""] {
            #expect(throws: JSONParser.SyntaxError.self, "\(bad)") { try JSONParser.parse(bad) }
        }
    }

    @Test func stringsWithEscapesAndUnicodeRoundTrip() throws {
        let s = "tab\tquote\"back\\slash\u{0}nul é 🎨 \u{7F}"
        let text = JSONWriter.compactString(.string(s))
        #expect(try JSONParser.parse(text) == .string(s))
        #expect(try JSONParser.parse(#""\u00e9\ud83c\udfa8""#) == .string("é🎨"))
    }

    @Test func randomValuesRoundTripThroughBothPrinters() throws {
        var rng = SeededGenerator(seed: 42)
        for _ in 0..<2000 {
            let v = randomJSON(&rng, depth: 0)
            #expect(try JSONParser.parse(JSONWriter.compact(v)) == v)
            #expect(try JSONParser.parse(JSONWriter.pretty(v)) == v)
        }
    }

    @Test func mutatedTextNeverCrashesTheParser() {
        var rng = SeededGenerator(seed: 7)
        let base = Array(JSONWriter.compact(randomJSON(&rng, depth: 0)))
        for _ in 0..<20_000 {
            var bytes = base
            for _ in 0..<Int.random(in: 1...4, using: &rng) where !bytes.isEmpty {
                bytes[Int.random(in: 0..<bytes.count, using: &rng)] = UInt8.random(in: 0...255, using: &rng)
            }
            _ = try? JSONParser.parse(bytes)
        }
    }
}

struct SeededGenerator: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed &* 0x9E37_79B9_7F4A_7C15 | 1 }
    mutating func next() -> UInt64 {
        state ^= state << 13
        state ^= state >> 7
        state ^= state << 17
        return state
    }
}

func randomJSON(_ rng: inout SeededGenerator, depth: Int) -> JSONValue {
    let pick = Int.random(in: 0..<(depth > 3 ? 5 : 7), using: &rng)
    switch pick {
    case 0: return .null
    case 1: return .bool(Bool.random(using: &rng))
    case 2: return .int(Int64.random(in: Int64.min...Int64.max, using: &rng))
    case 3: return .double(Double.random(in: -1e12...1e12, using: &rng))
    case 4:
        let chars = Array("aZ09 _-\"\\\n\té🎨\u{1}")
        return .string(String((0..<Int.random(in: 0..<12, using: &rng)).map { _ in chars.randomElement(using: &rng)! }))
    case 5: return .array((0..<Int.random(in: 0..<5, using: &rng)).map { _ in randomJSON(&rng, depth: depth + 1) })
    default:
        var o: [String: JSONValue] = [:]
        for i in 0..<Int.random(in: 0..<5, using: &rng) { o["k\(i)\(Int.random(in: 0..<3, using: &rng))"] = randomJSON(&rng, depth: depth + 1) }
        return .object(o)
    }
}
