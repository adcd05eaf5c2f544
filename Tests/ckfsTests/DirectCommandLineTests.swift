import ArgumentParser
import Testing
import TestSupport
@testable import ckfs

/// Whatever ``DirectCommandLine`` accepts, ArgumentParser parses to a command with the same
/// request; what it leaves to ArgumentParser is only what it must (help, odd forms, errors).
@Suite struct DirectCommandLineTests {
    /// The request of the command ArgumentParser makes of `words`, described with every value
    /// and its type; nil when it refuses them (an error, help, a version).
    func parsed(_ words: [String]) -> String? {
        guard let command = try? CKFS.parseAsRoot(words) else { return nil }
        guard let hot = command as? any DirectlyParsed else { return "not a direct command: \(type(of: command))" }
        return String(reflecting: hot.request)
    }

    func direct(_ words: [String]) -> String? {
        DirectCommandLine.request(words, among: CKFS.directCommands).map { String(reflecting: $0) }
    }

    /// Values for each option: plain ones either reader takes, and odd ones.
    static let plainValues: [String: [String]] = [
        "--store": ["/tmp/ckfs-direct-test-store", "relative/store"],
        "--container": ["iCloud.com.example.App", "c"],
        "--user": ["alice", "bob"],
        "--environment": ["development", "production"],
        "--device": ["phone", "d-1"],
        "--database": ["private", "public", "shared"],
        "--zone": ["Z", "Notes", "_defaultZone", "a zone with spaces"],
        "--owner": ["carol"],
        "--keys": ["title", "title,kind"],
        "--type": ["Item", "Note"],
        "--predicate": ["kind == 'k3'", "TRUEPREDICATE", "score > 5 AND kind == %@", "title BEGINSWITH 'a'"],
        "--arg": ["k3", "int:5", "date:2024-01-02T03:04:05Z", "x y"],
        "--sort": ["created", "created:desc", "score:asc", "where@1.5,2.5:desc"],
        "--limit": ["1", "10", "100", "250"],
        "--cursor": ["eyJ4IjoxfQ", "abc"],
        "--since": ["tok", "5"],
    ]
    static let oddValues = ["", "-1", "0", "x", "--zone", "-", "=", "1e3", "pub", "help", "-h", "--help", "Private", " 5"]
    static let oddWords = ["-h", "--help", "--", "--version", "--generate-completion-script", "--unknown", "-z", "help", "--no-account=true", "--zone=", "---zone"]

    /// Random command lines for each hot command, half of plain forms; each is compared.
    @Test func whatTheDirectReaderAcceptsArgumentParserParsesTheSame() {
        var random = SeededRandom(seed: 7)
        var acceptedOptions: Set<String> = []
        var plainAcceptedByBoth = 0
        var plainRefusedDirectOnly: [[String]] = []
        var accepted = 0
        for type in CKFS.directCommands {
            let options = type.directOptionNames
            for round in 0..<200 {
                let plain = round % 2 == 0
                var words = type.directPath
                var used: [String] = []
                for _ in 0..<random.next(below: 6) {
                    let name = options[random.next(below: options.count)]
                    if plain, used.contains(name), !type.repeatableOptionNames.contains(name) { continue }
                    used.append(name)
                    if name == "--no-account" {
                        words.append(name)
                        continue
                    }
                    let value = plain || random.next(below: 3) > 0
                        ? Self.plainValues[name]![random.next(below: Self.plainValues[name]!.count)]
                        : Self.oddValues[random.next(below: Self.oddValues.count)]
                    if random.next(below: 4) == 0 { words.append("\(name)=\(value)") } else { words += [name, value] }
                }
                if type.takesArguments {
                    for _ in 0..<random.next(below: 3) {
                        words.insert("item-\(random.next(below: 9))", at: type.directPath.count + random.next(below: words.count - type.directPath.count + 1))
                    }
                }
                if type == RecordCommand.Query.self, plain {
                    if !used.contains("--type") { words += ["--type", "Item"] }
                    // A predicate with a %@ for each --arg, so that both readers take the args.
                    let args = used.filter { $0 == "--arg" }.count
                    if args > 0, !used.contains("--predicate") {
                        words += ["--predicate", Array(repeating: "kind == %@", count: args).joined(separator: " OR ")]
                    }
                }
                if !plain, random.next(below: 2) == 0 {
                    words.insert(Self.oddWords[random.next(below: Self.oddWords.count)], at: type.directPath.count + random.next(below: words.count - type.directPath.count + 1))
                }

                let fromDirect = direct(words)
                let fromParser = parsed(words)
                if let fromDirect {
                    accepted += 1
                    #expect(fromDirect == fromParser, "\(words)")
                    acceptedOptions.formUnion(used)
                }
                if plain, fromParser != nil {
                    if fromDirect != nil { plainAcceptedByBoth += 1 } else { plainRefusedDirectOnly.append(words) }
                }
            }
        }
        // Every option of every hot command was read by both at least once, and the plain
        // forms all go the direct way.
        let allNames = Set(CKFS.directCommands.flatMap { $0.directOptionNames })
        #expect(acceptedOptions == allNames, "never accepted: \(allNames.subtracting(acceptedOptions).sorted())")
        #expect(plainRefusedDirectOnly.isEmpty, "plain command lines left to ArgumentParser: \(plainRefusedDirectOnly.prefix(5))")
        #expect(plainAcceptedByBoth > 150 && accepted > plainAcceptedByBoth, "accepted \(accepted), plain \(plainAcceptedByBoth)")
    }

    /// The commands ArgumentParser would find at each direct path are the direct commands.
    @Test func eachDirectPathNamesItsCommandInTheTree() {
        for type in CKFS.directCommands {
            var node: ParsableCommand.Type = CKFS.self
            for name in type.directPath {
                guard let next = node.configuration.subcommands.first(where: { $0.configuration.commandName == name }) else {
                    Issue.record("\(type.directPath) is not a path of the command tree")
                    return
                }
                node = next
            }
            #expect(ObjectIdentifier(node) == ObjectIdentifier(type), "\(type.directPath) names \(node), not \(type)")
        }
    }

    /// Help, versions, odd forms and failed checks are ArgumentParser's, with its messages.
    @Test func helpOddFormsAndFailedChecksGoToArgumentParser() {
        let refused: [[String]] = [
            ["record", "fetch", "--help"], ["record", "fetch", "-h", "a"], ["record", "fetch", "--", "a"],
            ["record", "fetch", "--zone"], ["record", "fetch", "--zone", "-a", "b"], ["record", "fetch", "a", "--zone", "Z", "--zone", "Y"],
            ["record", "fetch"], ["record", "fetch", "a", "--database", "pub"], ["record", "fetch", "a", "--owner", "x"],
            ["record", "fetch", "a", "--no-account", "--user", "bob"], ["record", "fetch", "a", "--user="],
            ["record", "query"], ["record", "query", "--type", "Item", "--limit", "0"], ["record", "query", "--type", "Item", "--predicate", "kind =="],
            ["record", "query", "--type", "Item", "stray"], ["record", "query", "--type", "Item", "--sort", "x:up"],
            ["changes", "--limit", "0"], ["changes", "--limit", "ten"], ["changes", "--since"], ["changes", "help"],
            ["record", "save", "a"], ["help", "changes"], ["--version"], [],
        ]
        for words in refused {
            #expect(direct(words) == nil, "\(words)")
        }
        #expect(direct(["record", "fetch", "a", "--zone=Z", "--keys", "t"]) != nil)
    }
}

extension DirectlyParsed {
    static var directOptionNames: [String] { directOptions.map(\.name) }
    static var repeatableOptionNames: [String] {
        directOptions.compactMap { if case .values = $0.kind { $0.name } else { nil } }
    }
    static var takesArguments: Bool { directArgument != nil }
}

/// A small generator with a fixed seed (SplitMix64), so a failure repeats.
struct SeededRandom {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next(below bound: Int) -> Int {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        z ^= z >> 31
        return Int(z % UInt64(bound))
    }
}
