import Foundation

/// Record types and the type of each of their fields, per environment, kept in
/// `schema.json`. In development the schema grows as records are saved; production changes
/// only by ``deploy()``.
public final class Schema: @unchecked Sendable {
    public typealias Types = [String: [String: FieldType]]

    let path: String
    private let writer: FileWriter
    /// Guards `cached`. Entries only ever get added, so a cached answer stays right; a miss
    /// re-reads the file.
    private let lock = NSLock()
    private var cached: [Environment: Types] = [:]
    private var loaded = false

    init(path: String, writer: FileWriter) {
        self.path = path
        self.writer = writer
    }

    /// What a save would add to the schema.
    public struct Additions: Sendable, Equatable {
        public var types: Set<String> = []
        public var fields: [String: [String: FieldType]] = [:]
        public var isEmpty: Bool { types.isEmpty && fields.isEmpty }

        mutating func merge(_ other: Additions) {
            types.formUnion(other.types)
            for (t, fs) in other.fields { fields[t, default: [:]].merge(fs) { a, _ in a } }
        }
    }

    public func types(_ environment: Environment) throws(CKError) -> Types {
        try reloadIfNeeded(force: false)
        return lock.withLock { cached[environment] ?? [:] }
    }

    private func reloadIfNeeded(force: Bool) throws(CKError) {
        if !force && lock.withLock({ loaded }) { return }
        let json = try readJSONFile(path)
        var all: [Environment: Types] = [:]
        for env in Environment.allCases {
            var types: Types = [:]
            for (typeName, fields) in json?[env.rawValue]?.objectValue ?? [:] {
                var fs: [String: FieldType] = [:]
                for (k, v) in fields.objectValue ?? [:] { if let n = v.stringValue, let t = FieldType(name: n) { fs[k] = t } }
                types[typeName] = fs
            }
            all[env] = types
        }
        lock.withLock {
            cached = all
            loaded = true
        }
    }

    /// The record type of user records.
    public static let usersRecordType = "Users"

    /// Checks a record against the schema; returns what saving it would add. `pending` is
    /// what earlier records of the same operation add.
    func check(_ record: Record, environment: Environment, pending: Additions) throws(CKError) -> Additions {
        var additions = Additions()
        var types = try self.types(environment)
        let type = record.recordType
        var known = types[type]
        let needsNew = known == nil || record.fields.contains { known?[$0.key] == nil }
        if needsNew {
            try reloadIfNeeded(force: true)
            types = try self.types(environment)
            known = types[type]
        }
        if known == nil && !pending.types.contains(type) {
            // `Users` is built in: every environment has it, fields still need a deploy.
            if environment == .production && type != Schema.usersRecordType {
                throw .invalid("record type \(type) does not exist in the production schema; save it in development and run `ckfs schema deploy`")
            }
            additions.types.insert(type)
        }
        for (key, value) in record.fields {
            let fixed = known?[key] ?? pending.fields[type]?[key]
            if let fixed {
                guard fixed == value.type else {
                    throw .invalid("field \"\(key)\" of record type \(type) is \(fixed.name); it cannot hold a \(value.type.name) value (a field's type is fixed by its first save)")
                }
                continue
            }
            if environment == .production {
                throw .invalid("field \"\(key)\" does not exist on record type \(type) in the production schema; save it in development and run `ckfs schema deploy`")
            }
            additions.fields[type, default: [:]][key] = value.type
        }
        return additions
    }

    /// The fields of a record type, or nil when there is no such type (read again on a miss:
    /// another process may have added it).
    public func fields(of type: String, environment: Environment) throws(CKError) -> [String: FieldType]? {
        if let known = try types(environment)[type] { return known }
        try reloadIfNeeded(force: true)
        return lock.withLock { cached[environment]?[type] }
    }

    /// The type a field has, if any: used to fit untyped input to the schema.
    func fieldType(_ type: String, _ key: String, environment: Environment) throws(CKError) -> FieldType? {
        try types(environment)[type]?[key]
    }

    /// Adds to the schema durably, before the records that need it are committed. Fails when
    /// another process fixed one of the fields to another type meanwhile.
    func add(_ additions: Additions, environment: Environment) throws(CKError) {
        guard !additions.isEmpty else { return }
        try withFileLock(path + ".lock") { () throws(CKError) in
            try reloadIfNeeded(force: true)
            var all = lock.withLock { cached }
            var types = all[environment] ?? [:]
            for t in additions.types where types[t] == nil { types[t] = [:] }
            for (t, fields) in additions.fields {
                for (k, v) in fields {
                    if let existing = types[t]?[k], existing != v {
                        throw .invalid("field \"\(k)\" of record type \(t) was just fixed to \(existing.name) by another save; it cannot hold \(v.name)")
                    }
                    types[t, default: [:]][k] = v
                }
            }
            all[environment] = types
            try write(all)
        }
    }

    /// Copies development's record types and fields to production.
    @discardableResult
    public func deploy() throws(CKError) -> Additions {
        try withFileLock(path + ".lock") { () throws(CKError) -> Additions in
            try reloadIfNeeded(force: true)
            var all = lock.withLock { cached }
            let dev = all[.development] ?? [:]
            var prod = all[.production] ?? [:]
            var added = Additions()
            for (t, fields) in dev {
                if prod[t] == nil { prod[t] = [:]; added.types.insert(t) }
                for (k, v) in fields where prod[t]?[k] == nil {
                    prod[t]![k] = v
                    added.fields[t, default: [:]][k] = v
                }
            }
            all[.production] = prod
            try write(all)
            return added
        }
    }

    private func write(_ all: [Environment: Types]) throws(CKError) {
        var o: [String: JSONValue] = ["format": .int(1)]
        for env in Environment.allCases {
            o[env.rawValue] = .object((all[env] ?? [:]).mapValues { .object($0.mapValues { .string($0.name) }) })
        }
        try writer.replace(path, with: JSONWriter.pretty(.object(o)), durable: true)
        lock.withLock {
            cached = all
            loaded = true
        }
    }

    /// The schema as JSON, as `ckfs schema show` prints it.
    public func json() throws(CKError) -> JSONValue {
        var o: [String: JSONValue] = [:]
        for env in Environment.allCases {
            o[env.rawValue] = .object(try types(env).mapValues { .object($0.mapValues { .string($0.name) }) })
        }
        return .object(o)
    }
}
