import ArgumentParser

/// The commands a script runs cold again and again (`record fetch`, `record query`, `changes`:
/// ``CKFS/directCommands``) read their own arguments before ArgumentParser does.
///
/// ArgumentParser learns a command's options by reflecting on it: in a new process that is the
/// Swift runtime's first look at every type and conformance involved, about two fifths of a
/// cold query's time (docs/Performance.md, row 10). The reader here knows each hot command's
/// options from a table beside the command's declaration, reads them into the command's request
/// (``DirectRequest``, what the command does, from plain values), and accepts only the plainest
/// forms: `--name value`, `--name=value`, flags, and bare words for arguments. Any other word
/// (`-h`, `--help`, `--`, an unknown or repeated option, a value starting with `-` or one that
/// does not convert) sends the whole command line to ArgumentParser, as does a command whose
/// checks (`validate()`, its option groups' first) fail, so help, completions and every error
/// message come from ArgumentParser alone. `DirectCommandLineTests` checks that whatever this
/// reader accepts, ArgumentParser parses to the same request.
enum DirectCommandLine {
    /// What the one of `commands` that `arguments` (without the program's name) name asks for,
    /// read and checked, or nil when ArgumentParser must read them.
    static func request(_ arguments: [String], among commands: [any DirectlyParsed.Type]) -> (any DirectRequest)? {
        for type in commands where arguments.starts(with: type.directPath) {
            return type.direct(arguments.dropFirst(type.directPath.count))
        }
        return nil
    }
}

/// What a ``DirectlyParsed`` command does, from its options' values: a plain value, which
/// ``DirectCommandLine`` makes without ArgumentParser's property wrappers (each a generic type
/// the runtime instantiates at its first use) and the command makes from what ArgumentParser
/// parsed.
protocol DirectRequest {
    /// Every option at its declared default.
    init()
    /// The checks ArgumentParser makes after parsing: each option group's `validate()`, inner
    /// groups first, then the command's.
    func validateAll() throws
    func run() throws
}

/// A command whose arguments ``DirectCommandLine`` reads.
protocol DirectlyParsed: ParsableCommand {
    associatedtype Request: DirectRequest
    /// The command's names from the root, as typed: `["record", "fetch"]`.
    static var directPath: [String] { get }
    /// Its options, each once (`.values` options any number of times).
    static var directOptions: [DirectOption<Request>] { get }
    /// Takes one bare word, or refuses it (false); nil when the command takes no arguments.
    static var directArgument: ((inout Request, String) -> Bool)? { get }
    /// What the options ArgumentParser parsed ask for.
    var request: Request { get }
}

extension DirectlyParsed {
    /// What these words (after the command's path) ask for, checked; nil when a word or a
    /// check is ArgumentParser's to answer.
    static func direct(_ words: ArraySlice<String>) -> Request? {
        guard let request = parse(words) else { return nil }
        do { try request.validateAll() } catch { return nil }
        return request
    }

    /// The words read onto the defaults, unchecked; nil when a word is not of the plain forms.
    static func parse(_ words: ArraySlice<String>) -> Request? {
        var request = Request()
        let options = directOptions
        var given: [String] = []
        var index = words.startIndex
        while index < words.endIndex {
            let word = words[index]
            index += 1
            guard word.hasPrefix("-") else {
                guard word != "help", let take = directArgument, take(&request, word) else { return nil }
                continue
            }
            var name = word
            var attached: String?
            if let equals = word.firstIndex(of: "=") {
                name = String(word[..<equals])
                attached = String(word[word.index(after: equals)...])
            }
            guard let found = options.indices.first(where: { options[$0].name == name }) else { return nil }
            let option = options[found]
            switch option.kind {
            case .flag(let set):
                guard attached == nil, !given.contains(name) else { return nil }
                given.append(name)
                set(&request)
            case .value(let set), .values(let set):
                if case .value = option.kind, given.contains(name) { return nil }
                given.append(name)
                let value: String
                if let attached {
                    value = attached
                } else {
                    guard index < words.endIndex else { return nil }
                    value = words[index]
                    index += 1
                }
                guard !value.isEmpty, !value.hasPrefix("-"), set(&request, value) else { return nil }
            }
        }
        for option in options where option.required && !given.contains(option.name) { return nil }
        return request
    }
}

/// One option of a ``DirectlyParsed`` command: its name as typed and how it sets the request.
struct DirectOption<Root> {
    enum Kind {
        /// Given at most once, with a value; the setter refuses (false) a value that does not convert.
        case value((inout Root, String) -> Bool)
        /// Given any number of times, each value appended.
        case values((inout Root, String) -> Bool)
        /// Given at most once, without a value.
        case flag((inout Root) -> Void)
    }

    let name: String
    let kind: Kind
    /// Whether the command line must give it (an option declared without a default).
    var required = false

    static func value(_ name: String, required: Bool = false, _ set: @escaping (inout Root, String) -> Bool) -> Self {
        Self(name: name, kind: .value(set), required: required)
    }
    static func values(_ name: String, _ set: @escaping (inout Root, String) -> Bool) -> Self { Self(name: name, kind: .values(set)) }
    static func flag(_ name: String, _ set: @escaping (inout Root) -> Void) -> Self { Self(name: name, kind: .flag(set)) }

    /// The same option on a value that holds `Root` (a request holding an option group's values).
    func within<Outer>(_ group: WritableKeyPath<Outer, Root>) -> DirectOption<Outer> {
        switch kind {
        case .value(let set): .value(name, required: required) { set(&$0[keyPath: group], $1) }
        case .values(let set): .values(name) { set(&$0[keyPath: group], $1) }
        case .flag(let set): .flag(name) { set(&$0[keyPath: group]) }
        }
    }
}
