/// `container.json`: a container's quotas, settings and identities.
///
/// Read whole and written whole, under the container's file lock.
package struct ContainerInfo: Sendable, Equatable {
    package var identifier: String
    package var privateQuotaBytes: Int64
    package var publicQuotaBytes: Int64
    /// Whether an unknown OS user or `--user` name gets an identity on first use.
    package var autoEnrol = true
    /// Identities the container denies: their account status is `restricted`.
    package var restrictedUsers: [String] = []
    /// Record type → identities that may change or delete any public record of that type.
    package var writeRoles: [String: [String]] = [:]
    /// By name.
    package var users: [String: Identity] = [:]
    /// API tokens, web auth tokens and server-to-server keys of `ckfs serve`.
    package var web = WebCredentials()

    package init(identifier: String, privateQuotaBytes: Int64, publicQuotaBytes: Int64) {
        self.identifier = identifier
        self.privateQuotaBytes = privateQuotaBytes
        self.publicQuotaBytes = publicQuotaBytes
    }

    package func json() -> JSONValue {
        .object([
            "identifier": .string(identifier),
            "format": .int(1),
            "quotas": .object(["privateBytes": .int(privateQuotaBytes), "publicBytes": .int(publicQuotaBytes)]),
            "settings": .object([
                "autoEnrol": .bool(autoEnrol),
                "restrictedUsers": .array(restrictedUsers.sorted().map { .string($0) }),
                "writeRoles": .object(writeRoles.mapValues { .array($0.sorted().map { .string($0) }) }),
            ]),
            "users": .array(users.values.sorted { $0.name < $1.name }.map(Self.json)),
        ].merging(web.isEmpty ? [:] : ["webServices": web.json()]) { a, _ in a })
    }

    private static func json(_ u: Identity) -> JSONValue {
        var o: [String: JSONValue] = [
            "name": .string(u.name),
            "userRecordName": .string(u.userRecordName),
            "emails": .array(u.emails.map { .string($0) }),
            "contacts": .array(u.contacts.map { .string($0) }),
            "permissions": .object([ApplicationPermission.userDiscoverability.rawValue: .string(u.discoverability.rawValue)]),
            "created": .int(u.created),
        ]
        if let uid = u.uid { o["uid"] = .int(Int64(uid)) }
        return .object(o)
    }

    /// Reads `container.json`; what a hand edit got wrong is an error naming the key and the fix.
    package init(json: JSONValue, defaults: StoreSettings, path: String) throws(CKError) {
        func bad(_ what: String) -> CKError {
            CKError(.internalError, "\(path): \(what); fix the file by hand (ckfs fsck checks it)")
        }
        guard case .object = json else { throw bad("it is not a JSON object") }
        identifier = json["identifier"]?.stringValue ?? ""
        privateQuotaBytes = json["quotas"]?["privateBytes"]?.int64Value ?? defaults.privateQuotaBytes
        publicQuotaBytes = json["quotas"]?["publicBytes"]?.int64Value ?? defaults.publicQuotaBytes
        let s = json["settings"]
        if let v = s?["autoEnrol"] {
            guard case .bool(let b) = v else { throw bad("settings.autoEnrol must be true or false") }
            autoEnrol = b
        }
        restrictedUsers = (s?["restrictedUsers"]?.arrayValue ?? []).compactMap(\.stringValue)
        if case .object(let roles)? = s?["writeRoles"] {
            for (type, names) in roles { writeRoles[type] = (names.arrayValue ?? []).compactMap(\.stringValue) }
        }
        web = try WebCredentials(json: json["webServices"], bad: bad)
        for (i, u) in (json["users"]?.arrayValue ?? []).enumerated() {
            guard let name = u["name"]?.stringValue, !name.isEmpty else { throw bad("users[\(i)] has no \"name\"") }
            guard let id = u["userRecordName"]?.stringValue, id.hasPrefix("_"), id.count > 1 else {
                throw bad("users[\(i)] (\(name)) needs a \"userRecordName\" of \"_\" and an id")
            }
            var uid: UInt32?
            if let n = u["uid"]?.int64Value {
                guard let v = UInt32(exactly: n) else { throw bad("users[\(i)] (\(name)) has uid \(n), which is not a uid") }
                uid = v
            }
            let status = u["permissions"]?[ApplicationPermission.userDiscoverability.rawValue]?.stringValue
            guard let discoverability = PermissionStatus(rawValue: status ?? "initialState") else {
                throw bad("users[\(i)] (\(name)) has permission \(status ?? "") ; use one of \(PermissionStatus.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            users[name] = Identity(
                name: name, userRecordName: id, uid: uid,
                emails: (u["emails"]?.arrayValue ?? []).compactMap(\.stringValue),
                contacts: (u["contacts"]?.arrayValue ?? []).compactMap(\.stringValue),
                discoverability: discoverability, created: u["created"]?.int64Value ?? 0)
        }
    }

    // MARK: Who is calling

    /// The identity `caller` acts as, if the container has one: by uid for an OS user, else by name.
    func identity(of caller: Caller) -> Identity? {
        guard !caller.userName.isEmpty else { return nil }
        if let uid = caller.uid, let u = users.values.first(where: { $0.uid == uid }) { return u }
        guard let u = users[caller.userName] else { return nil }
        // A name that belongs to another uid is not this caller's.
        if let uid = caller.uid, let owner = u.uid, owner != uid { return nil }
        return u
    }

    func identity(userRecordName: String) -> Identity? {
        users.values.first { $0.userRecordName == userRecordName }
    }

    /// The identity with this email address (kept lowercase).
    func identity(email: String) -> Identity? {
        let e = email.lowercased()
        return users.values.first { $0.emails.contains(e) }
    }

    func isRestricted(_ u: Identity) -> Bool { restrictedUsers.contains(u.name) }

    func hasWriteRole(_ u: Identity, recordType: String) -> Bool {
        writeRoles[recordType]?.contains(u.name) == true
    }
}
