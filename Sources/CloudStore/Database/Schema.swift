import Foundation

/// Record types and the type of each of their fields, per environment, kept by the store's
/// backend (`schema.json` in the file backend). In development the schema grows as records are
/// saved; production changes only by ``deploy()``.
///
/// Each field also has indexes (``SchemaIndex``): every index its type can have, as CloudKit's
/// development environment gives a field it creates, unless `schema.json`'s `indexes` names
/// the ones it has (``setIndex(_:on:of:present:)``, in development; ``deploy()`` copies them).
public final class Schema: @unchecked Sendable {
    public typealias Types = [String: [String: FieldType]]
    /// Indexes set by hand: record type → field → the indexes it has.
    public typealias Indexes = [String: [String: Set<SchemaIndex>]]

    private let storage: any SchemaStorage
    /// Guards `cached` and `loaded`: the schema as kept at version `loaded`. Types and fields
    /// are only ever added (by a save, a deploy), so a cached one stays right and a miss reads
    /// the schema again. Indexes can also be removed, and a deploy replaces production's: each
    /// read of indexes asks for the version kept (one `stat` in the file backend) and reads the
    /// schema again when another process (or another opening of the store) changed it.
    private let lock = NSLock()
    private var cached = SchemaDocument()
    private var loaded: SchemaVersion?

    init(storage: any SchemaStorage) {
        self.storage = storage
    }

    /// Takes what the storage keeps as the cache, at `version`; nil (after a change, which
    /// another process may have followed with its own since the storage let go) makes the
    /// next look read the schema again rather than trust it.
    private func adopt(_ document: SchemaDocument, _ version: SchemaVersion?) {
        lock.withLock {
            cached = document
            loaded = version
        }
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
        return lock.withLock { cached.types[environment] ?? [:] }
    }

    /// Reads the schema when `force`, when it was never read, or, `ifReplaced`, when the
    /// version kept is not the one read last.
    private func reloadIfNeeded(force: Bool, ifReplaced: Bool = false) throws(CKError) {
        if !force && !ifReplaced && lock.withLock({ loaded != nil }) { return }
        if !force, try lock.withLock({ loaded }) == storage.version() { return }
        let (document, version) = try storage.read()
        adopt(document, version)
    }

    /// The indexes a field has: those set for it, else every index its type can have. Empty
    /// for a field the schema does not have.
    public func indexes(of type: String, field: String, environment: Environment) throws(CKError) -> Set<SchemaIndex> {
        try indexes(of: type, environment: environment)?[field] ?? []
    }

    /// The indexes of every field of a record type, from one look at the file; nil when there
    /// is no such type.
    public func indexes(of type: String, environment: Environment) throws(CKError) -> [String: Set<SchemaIndex>]? {
        try reloadIfNeeded(force: false, ifReplaced: true)
        guard let fields = try fields(of: type, environment: environment) else { return nil }
        let set = lock.withLock { cached.indexes[environment]?[type] ?? [:] }
        return Dictionary(uniqueKeysWithValues: fields.map { ($0.key, set[$0.key] ?? SchemaIndex.applicable(to: $0.value)) })
    }

    /// Adds (`present`) or removes an index of a field in development, durably.
    public func setIndex(_ index: SchemaIndex, on field: String, of type: String, present: Bool) throws(CKError) {
        let (_, document) = try storage.update { (schema: inout SchemaDocument) throws(CKError) in
            guard let fields = schema.types[.development]?[type] else {
                throw .invalid("no record type \(type) in the development schema; save a record of that type first, or check the name")
            }
            guard let fieldType = fields[field] else {
                throw .invalid("record type \(type) has no field \"\(field)\"; its fields are \(fields.keys.sorted().joined(separator: ", "))")
            }
            guard !fieldType.isEncrypted else {
                throw .invalid("field \"\(field)\" of record type \(type) is encrypted (\(fieldType.name)); the server cannot read an encrypted field, so it has no indexes")
            }
            guard SchemaIndex.applicable(to: fieldType).contains(index) else {
                throw .invalid("a \(fieldType.name) field cannot be \(index.word); it can be \(SchemaIndex.applicable(to: fieldType).sorted().map(\.word).joined(separator: ", "))")
            }
            var set = schema.indexes[.development]?[type]?[field] ?? SchemaIndex.applicable(to: fieldType)
            if present { set.insert(index) } else { set.remove(index) }
            schema.indexes[.development, default: [:]][type, default: [:]][field] = set
        }
        adopt(document, nil)
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
            let valueType = value.type.encrypted(record.encryptedKeys.contains(key))
            let fixed = known?[key] ?? pending.fields[type]?[key]
            if let fixed {
                guard fixed == valueType else {
                    var hint = "a field's type is fixed by its first save"
                    if fixed.isEncrypted != valueType.isEncrypted {
                        hint = fixed.isEncrypted ? "write it through encryptedValues, or with \"isEncrypted\": true"
                            : "an existing field cannot become encrypted; encrypt a new field"
                    }
                    throw .invalid("field \"\(key)\" of record type \(type) is \(fixed.name); it cannot hold a \(valueType.name) value (\(hint))")
                }
                continue
            }
            if environment == .production {
                throw .invalid("field \"\(key)\" does not exist on record type \(type) in the production schema; save it in development and run `ckfs schema deploy`")
            }
            additions.fields[type, default: [:]][key] = valueType
        }
        return additions
    }

    /// The fields of a record type, or nil when there is no such type (read again on a miss,
    /// of the type or of one of `keys`: another process may have added it).
    public func fields(of type: String, environment: Environment, including keys: [String] = []) throws(CKError) -> [String: FieldType]? {
        if let known = try types(environment)[type], keys.allSatisfy({ known[$0] != nil }) { return known }
        try reloadIfNeeded(force: true)
        return lock.withLock { cached.types[environment]?[type] }
    }

    /// Adds to the schema durably, before the records that need it are committed. Fails when
    /// another process fixed one of the fields to another type meanwhile.
    func add(_ additions: Additions, environment: Environment) throws(CKError) {
        guard !additions.isEmpty else { return }
        let (_, document) = try storage.update { (schema: inout SchemaDocument) throws(CKError) in
            var types = schema.types[environment] ?? [:]
            for t in additions.types where types[t] == nil { types[t] = [:] }
            for (t, fields) in additions.fields {
                for (k, v) in fields {
                    if let existing = types[t]?[k], existing != v {
                        throw .invalid("field \"\(k)\" of record type \(t) was just fixed to \(existing.name) by another save; it cannot hold \(v.name)")
                    }
                    types[t, default: [:]][k] = v
                }
            }
            schema.types[environment] = types
        }
        adopt(document, nil)
    }

    /// Copies development's record types and fields to production.
    @discardableResult
    public func deploy() throws(CKError) -> Additions {
        let (added, document) = try storage.update { (schema: inout SchemaDocument) throws(CKError) -> Additions in
            let dev = schema.types[.development] ?? [:]
            var prod = schema.types[.production] ?? [:]
            var added = Additions()
            for (t, fields) in dev {
                if prod[t] == nil { prod[t] = [:]; added.types.insert(t) }
                for (k, v) in fields where prod[t]?[k] == nil {
                    prod[t]![k] = v
                    added.fields[t, default: [:]][k] = v
                }
            }
            schema.types[.production] = prod
            // Production's indexes become development's.
            schema.indexes[.production] = schema.indexes[.development] ?? [:]
            return added
        }
        adopt(document, nil)
        return added
    }

    /// The schema as JSON, as `ckfs schema show` prints it: each environment's types and
    /// fields, and under `indexes` the indexes every field has.
    public func json() throws(CKError) -> JSONValue {
        var o: [String: JSONValue] = [:]
        var indexes: [String: JSONValue] = [:]
        for env in Environment.allCases {
            let types = try types(env)
            o[env.rawValue] = .object(types.mapValues { .object($0.mapValues { .string($0.name) }) })
            var every: Indexes = [:]
            for t in types.keys { every[t] = try self.indexes(of: t, environment: env) }
            indexes[env.rawValue] = SchemaDocument.json(every)
        }
        o["indexes"] = .object(indexes)
        return .object(o)
    }
}
