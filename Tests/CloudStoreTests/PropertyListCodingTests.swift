import Foundation
import Testing
import TestSupport
@testable import CloudStore

/// The XML property-list codec of the key-value store: round trips, what Python's
/// plistlib writes and reads, errors with positions, and no crash on garbage.
@Suite struct PropertyListCodingTests {
    /// A small deterministic generator, so a failure can be replayed.
    struct Generator: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            return state ^ (state >> 29)
        }
    }

    static func randomText(_ g: inout Generator) -> String {
        let pool = ["a", "Z", "0", " ", "<", ">", "&", "\"", "'", "\n", "\t", "\r", "é", "日", "🙂", "]", "]]>", "-", ";", "&amp;"]
        return (0..<Int.random(in: 0...12, using: &g)).map { _ in pool.randomElement(using: &g)! }.joined()
    }

    static func randomValue(_ g: inout Generator, depth: Int = 0) -> PropertyListValue {
        switch Int.random(in: 0..<(depth > 3 ? 6 : 8), using: &g) {
        case 0: return .string(randomText(&g))
        case 1: return .integer([Int64.min, Int64.max, 0, -1, Int64.random(in: -1_000_000...1_000_000, using: &g)].randomElement(using: &g)!)
        case 2: return .real([0.1, -0.0, 1e300, -2.5e-300, .nan, .infinity, -.infinity, Double.random(in: -1e6...1e6, using: &g)].randomElement(using: &g)!)
        case 3: return .bool(Bool.random(using: &g))
        case 4: return .date(Date(timeIntervalSince1970: Double(Int64.random(in: -62_135_596_800...253_402_300_799, using: &g))))
        case 5: return .data((0..<Int.random(in: 0...40, using: &g)).map { _ in UInt8.random(in: 0...255, using: &g) })
        case 6: return .array((0..<Int.random(in: 0...4, using: &g)).map { _ in randomValue(&g, depth: depth + 1) })
        default:
            var d: [String: PropertyListValue] = [:]
            for _ in 0..<Int.random(in: 0...4, using: &g) { d[randomText(&g)] = randomValue(&g, depth: depth + 1) }
            return .dictionary(d)
        }
    }

    @Test func writtenValuesParseBackEqual() throws {
        var g = Generator(state: 42)
        for _ in 0..<2000 {
            let value = Self.randomValue(&g)
            #expect(try PropertyListParser.parse(PropertyListWriter.document(value)) == value, "\(value)")
            #expect(try PropertyListParser.parse(PropertyListWriter.element(value)) == value, "\(value)")
        }
    }

    @Test func documentLooksLikeApples() {
        let text = String(decoding: PropertyListWriter.document(.dictionary(["b": .array([.integer(1), .bool(true)]), "a": .string("x<y & z")])), as: UTF8.self)
        #expect(text == """
        <?xml version="1.0" encoding="UTF-8"?>
        <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
        <plist version="1.0">
        <dict>
        \t<key>a</key>
        \t<string>x&lt;y &amp; z</string>
        \t<key>b</key>
        \t<array>
        \t\t<integer>1</integer>
        \t\t<true/>
        \t</array>
        </dict>
        </plist>

        """)
    }

    @Test func compactSizeIsTheElementWithoutWhitespace() {
        #expect(PropertyListWriter.compactSize(.string("hi")) == 19)
        #expect(PropertyListWriter.compactSize(.string("a<b")) == "<string>a&lt;b</string>".utf8.count)
        #expect(PropertyListWriter.compactSize(.data([1, 2, 3])) == "<data>AQID</data>".utf8.count)
        #expect(PropertyListWriter.compactSize(.array([.bool(true), .integer(7)])) == "<array><true/><integer>7</integer></array>".utf8.count)
    }

    @Test func readsWhatPlistlibWritesAndPlistlibReadsWhatWeWrite() throws {
        let script = """
        import plistlib, datetime, sys
        v = {"s": "line1\\r\\nline2 <&> é🙂", "i": -9223372036854775808, "r": 2.5, "nan": float("nan"), "inf": float("-inf"),
             "t": True, "f": False, "d": datetime.datetime(2026, 11, 22, 9, 30, 15), "b": b"\\x00\\xffbytes",
             "a": [1, [2, [3, {"k": []}]], {}], "empty": ""}
        sys.stdout.buffer.write(plistlib.dumps(v, fmt=plistlib.FMT_XML))
        """
        let bytes = try runPython(script)
        let value = try PropertyListParser.parse(bytes)
        guard case .dictionary(let d) = value else { Issue.record("not a dict"); return }
        #expect(d["s"] == .string("line1\nline2 <&> é🙂"))  // plistlib writes \r\n as \n
        #expect(d["i"] == .integer(.min))
        #expect(d["r"] == .real(2.5))
        #expect(d["nan"].map { if case .real(let x) = $0 { x.isNaN } else { false } } == true)
        #expect(d["inf"] == .real(-.infinity))
        #expect(d["t"] == .bool(true) && d["f"] == .bool(false))
        #expect(d["d"] == .date(Date(timeIntervalSince1970: 1_795_339_815)))
        #expect(d["b"] == .data([0, 0xFF] + Array("bytes".utf8)))
        #expect(d["a"] == .array([.integer(1), .array([.integer(2), .array([.integer(3), .dictionary(["k": .array([])])])]), .dictionary([:])]))
        #expect(d["empty"] == .string(""))

        // And back: plistlib reads our document and sees the same values, \r kept.
        let ours = PropertyListWriter.document(.dictionary(["s": .string("a\r\nb"), "d": .date(Date(timeIntervalSince1970: 0)), "x": .data([1, 2]),
                                                            "n": .array([.real(.infinity), .integer(5)])]), comment: "ckfs generation 3")
        let path = NSTemporaryDirectory() + "ckfs-plist-\(UUID().uuidString).plist"
        try Data(ours).write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        let seen = try runPython("""
        import plistlib
        v = plistlib.load(open("\(path)", "rb"))
        print(repr(v["s"]), v["d"].isoformat(), list(v["x"]), v["n"])
        """)
        #expect(String(decoding: seen, as: UTF8.self) == "'a\\r\\nb' 1970-01-01T00:00:00 [1, 2] [inf, 5]\n")
    }

    @Test func errorsSayWhereAndWhat() {
        let cases: [(String, String, Int)] = [
            ("<plist><string>x</strin></plist>", "expected </string>", 1),
            ("<dict>\n  <key>a</key>\n  <integer>12x</integer>\n</dict>", "not a 64-bit signed integer", 3),
            ("<dict><key>a</key><true/><key>a</key><false/></dict>", "appears twice", 1),
            ("<dict><string>a</string></dict>", "expected <key>", 1),
            ("<plist><foo/></plist>", "unknown element <foo>", 1),
            ("<integer>9223372036854775808</integer>", "64-bit", 1),
            ("<date>2026-02-30T00:00:00Z</date>", "YYYY-MM-DDTHH:MM:SSZ", 1),
            ("<data>AB$C</data>", "not base64", 1),
            ("<string>a</string><string>b</string>", "text after the end", 1),
            ("<string>a", "ends before </string>", 1),
            ("<string>a\u{01}</string>", "control character", 1),
            ("<!DOCTYPE plist [<!ENTITY x \"y\">]><string>&x;</string>", "internal subset", 1),
            ("<string>&foo;</string>", "unknown entity", 1),
            ("bplist00\u{0}\u{1}", "binary property list", 1),
            ("<?xml version=\"1.0\" encoding=\"UTF-16\"?><string/>", "only UTF-8", 1),
            ("", "no property list", 1),
            ("just text", "text outside any element", 1),
            ("<plist></plist>", "empty", 1),
            ("<array><key>k</key></array>", "<key> outside a dict", 1),
            (String(repeating: "<array>", count: 200), "deeper than", 1),
        ]
        for (text, message, line) in cases {
            do {
                let v = try PropertyListParser.parse(text)
                Issue.record("parsed \(text.debugDescription) as \(v)")
            } catch {
                #expect(error.message.contains(message), "\(text.debugDescription): \(error)")
                #expect(error.line == line, "\(text.debugDescription): \(error)")
            }
        }
        #expect(throws: PropertyListParser.SyntaxError.self) { try PropertyListParser.parse([0x3C, 0x73, 0x74, 0x72, 0x69, 0x6E, 0x67, 0x3E, 0xC3, 0x28]) }
    }

    @Test func acceptsWhatOtherWritersWrite() throws {
        #expect(try PropertyListParser.parse("<string/>") == .string(""))
        #expect(try PropertyListParser.parse("\u{FEFF}<?xml version='1.0'?><!-- hi --><plist version=\"1.0\"><true></true></plist>\n<!-- bye -->") == .bool(true))
        #expect(try PropertyListParser.parse("<string><![CDATA[<a> & b]]> &#x1F642;&#65;</string>") == .string("<a> & b 🙂A"))
        #expect(try PropertyListParser.parse("<integer> 0x10 </integer>") == .integer(16))
        #expect(try PropertyListParser.parse("<real>+infinity</real>") == .real(.infinity))
        #expect(try PropertyListParser.parse("<data>\n\tAQ\n\tID\n</data>") == .data([1, 2, 3]))
        #expect(try PropertyListParser.parse("<array><!-- c --><integer>1</integer>  </array>") == .array([.integer(1)]))
    }

    @Test func garbageNeverCrashesTheParser() {
        var g = Generator(state: 7)
        let seeds = [PropertyListWriter.document(.dictionary(["k": .array([.string("v"), .date(Date(timeIntervalSince1970: 0)), .data([9])])]))]
        let alphabet = Array("<>/!?-[]&;#x\"'= \n\tabcdeiklnrstuy0123456789".utf8) + [0x00, 0xC3, 0xFF]
        var rejected = 0
        for i in 0..<100_000 {
            var bytes: [UInt8]
            if i % 2 == 0 {
                bytes = seeds[0]
                for _ in 0..<Int.random(in: 1...6, using: &g) {
                    let at = Int.random(in: 0..<bytes.count, using: &g)
                    switch Int.random(in: 0..<3, using: &g) {
                    case 0: bytes[at] = alphabet.randomElement(using: &g)!
                    case 1: bytes.remove(at: at)
                    default: bytes.insert(alphabet.randomElement(using: &g)!, at: at)
                    }
                }
            } else {
                bytes = (0..<Int.random(in: 0...60, using: &g)).map { _ in alphabet.randomElement(using: &g)! }
            }
            do { _ = try PropertyListParser.parse(bytes) } catch { rejected += 1 }
        }
        #expect(rejected > 50_000)
    }

    @Test func unrepresentableValuesAreNamed() {
        #expect(throws: CKError.self) { try PropertyListValue.string("a\u{0}b").checkRepresentable() }
        #expect(throws: CKError.self) { try PropertyListValue.date(Date(timeIntervalSince1970: -1e12)).checkRepresentable() }
        var deep = PropertyListValue.array([])
        for _ in 0..<PropertyListValue.maxDepth { deep = .array([deep]) }
        #expect(throws: CKError.self) { try deep.checkRepresentable() }
        #expect(throws: Never.self) { try PropertyListValue.string("tab\there\nnewline\r").checkRepresentable() }
    }
}

/// Runs a Python 3 script and returns its standard output; fails on a nonzero exit.
/// (Through the engine's posix_spawn, not Foundation's `Process`, whose `run()` reads past
/// readdir's buffer; see `Syscall.forEachName`.)
func runPython(_ script: String) throws -> [UInt8] {
    let base = NSTemporaryDirectory() + "ckfs-python-" + UUID().uuidString
    let (outFile, errFile) = (base + ".out", base + ".err")
    defer { for f in [outFile, errFile] { unlink(f) } }
    let pid = try Syscall.spawn("/usr/bin/env", arguments: ["env", "python3", "-c", script], environment: ProcessInfo.processInfo.environment,
                                files: .init(input: "/dev/null", output: outFile, error: errFile), closeOthers: true).get()
    let status = try Syscall.waitForExit(pid).get()
    guard status == 0 else {
        throw CKError(.internalError, "python3 failed: " + ((try? String(contentsOfFile: errFile, encoding: .utf8)) ?? ""))
    }
    return Array(FileManager.default.contents(atPath: outFile) ?? Data())
}
