import Foundation

// Managing identities, application permissions and discovery.
extension Container {
    /// Adds an identity; its name, uid and emails must be new to the container.
    @discardableResult
    public func addUser(_ name: String, uid: UInt32? = nil, emails: [String] = [], contacts: [String] = []) throws(CKError) -> Identity {
        try Self.checkUserName(name)
        let emails = try emails.map(Self.checkedEmail)
        let contacts = try contacts.map(Self.checkedEmail)
        return try update { (info: inout ContainerInfo) throws(CKError) -> Identity in
            guard info.users[name] == nil else {
                throw CKError(.invalidArguments, "user \(name) already exists in container \(identifier); change it with ckfs user update")
            }
            if let uid, let other = info.users.values.first(where: { $0.uid == uid }) {
                throw CKError(.invalidArguments, "uid \(uid) already belongs to user \(other.name); a uid is one identity")
            }
            try Self.checkEmailsFree(emails, for: name, in: info)
            let u = Identity(name: name, userRecordName: Identity.newUserRecordName(), uid: uid, emails: emails,
                             contacts: contacts, created: Store.now())
            info.users[name] = u
            return u
        }
    }

    /// Changes an identity: adds emails and contacts, sets whether it is restricted, gives or
    /// takes write roles.
    @discardableResult
    public func updateUser(_ name: String, addEmails: [String] = [], addContacts: [String] = [], removeContacts: [String] = [],
                           restricted: Bool? = nil, grantWriteRoles: [String] = [], revokeWriteRoles: [String] = []) throws(CKError) -> Identity {
        let addEmails = try addEmails.map(Self.checkedEmail)
        let addContacts = try addContacts.map(Self.checkedEmail)
        let removeContacts = Set(removeContacts.map { $0.lowercased() })
        for t in grantWriteRoles { try Names.checkRecordType(t) }
        return try update { (info: inout ContainerInfo) throws(CKError) -> Identity in
            guard var u = info.users[name] else {
                throw CKError(.unknownItem, "no user \(name) in container \(identifier); ckfs user list shows them, ckfs user add creates one")
            }
            try Self.checkEmailsFree(addEmails, for: name, in: info)
            for e in addEmails where !u.emails.contains(e) { u.emails.append(e) }
            u.contacts.removeAll { removeContacts.contains($0) }
            for c in addContacts where !u.contacts.contains(c) { u.contacts.append(c) }
            info.users[name] = u
            if let restricted {
                info.restrictedUsers.removeAll { $0 == name }
                if restricted { info.restrictedUsers.append(name) }
            }
            for t in grantWriteRoles where info.writeRoles[t]?.contains(name) != true { info.writeRoles[t, default: []].append(name) }
            for t in revokeWriteRoles {
                info.writeRoles[t]?.removeAll { $0 == name }
                if info.writeRoles[t]?.isEmpty == true { info.writeRoles[t] = nil }
            }
            return u
        }
    }

    /// Whether OS users and `--user` names the container does not know get an identity on first use.
    public var autoEnrol: Bool { current.autoEnrol }

    public func setAutoEnrol(_ on: Bool) throws(CKError) {
        try update { (info: inout ContainerInfo) throws(CKError) in info.autoEnrol = on }
    }

    /// Identities the container denies (account status `restricted`).
    public var restrictedUsers: [String] { current.restrictedUsers.sorted() }
    /// Record type → identities with a write role for it.
    public var writeRoles: [String: [String]] { current.writeRoles }

    // MARK: Permissions

    /// The status of a permission for the caller's identity.
    public func permissionStatus(_ permission: ApplicationPermission, caller: Caller) throws(CKError) -> PermissionStatus {
        try signedIn(caller, for: "a permission").discoverability
    }

    /// Asks on the terminal (stdin and stderr) when both are one; nil otherwise: the `ask` of
    /// ``requestPermission(_:caller:ask:)`` for a program run by a person.
    public static let terminalPrompt: @Sendable (String) -> Bool? = { question in TerminalPrompt.ask(question) }

    /// Asks for a permission once: when it is already granted or denied, returns that
    /// without asking; else `ask` answers (nil: no answer could be had, `couldNotComplete`, and
    /// a later request asks again). `ask` runs outside the container's lock, since it may wait
    /// for a person; a decision another request kept meanwhile stands.
    public func requestPermission(_ permission: ApplicationPermission, caller: Caller,
                                  ask: () -> Bool?) throws(CKError) -> PermissionStatus {
        let u = try signedIn(caller, for: "a permission")
        if u.discoverability.isDecided { return u.discoverability }
        let answer = ask()
        return try update { (info: inout ContainerInfo) throws(CKError) -> PermissionStatus in
            guard var now = info.users[u.name] else { throw CKError(.unknownItem, "user \(u.name) was removed from container \(identifier)") }
            if now.discoverability.isDecided { return now.discoverability }
            now.discoverability = answer.map { $0 ? .granted : .denied } ?? .couldNotComplete
            info.users[u.name] = now
            return now.discoverability
        }
    }

    // MARK: Discovery

    /// Every identity that granted discoverability and has an email address in the caller's contacts.
    public func discoverAllIdentities(caller: Caller) throws(CKError) -> [DiscoveredIdentity] {
        let me = try signedIn(caller, for: "discovering users")
        let contacts = Set(me.contacts)
        return current.users.values
            .filter { $0.name != me.name && $0.discoverability == .granted && $0.emails.contains(where: contacts.contains) }
            .sorted { $0.name < $1.name }
            .map(Self.discovered)
    }

    /// The identity with this email address, when it granted discoverability.
    public func discoverIdentity(email: String, caller: Caller) throws(CKError) -> DiscoveredIdentity? {
        _ = try signedIn(caller, for: "discovering users")
        // An email address belongs to one identity at most.
        return current.identity(email: email).flatMap { $0.discoverability == .granted ? Self.discovered($0) : nil }
    }

    /// The identity with this user record name, when it granted discoverability.
    public func discoverIdentity(userRecordName: String, caller: Caller) throws(CKError) -> DiscoveredIdentity? {
        _ = try signedIn(caller, for: "discovering users")
        return current.identity(userRecordName: userRecordName).flatMap { $0.discoverability == .granted ? Self.discovered($0) : nil }
    }

    private static func discovered(_ u: Identity) -> DiscoveredIdentity {
        DiscoveredIdentity(userRecordName: u.userRecordName, name: u.name, emails: u.emails)
    }

    // MARK: Checks

    static func checkUserName(_ name: String) throws(CKError) {
        guard !name.isEmpty, name.utf8.count <= 64, !name.contains("/"), name.unicodeScalars.allSatisfy({ $0.value > 0x20 }) else {
            throw .invalid("user name \"\(name)\" is not valid: use 1 to 64 bytes, no spaces, control characters or '/'")
        }
    }

    static func checkedEmail(_ email: String) throws(CKError) -> String {
        let e = email.trimmingCharacters(in: .whitespaces).lowercased()
        let parts = e.split(separator: "@", omittingEmptySubsequences: false)
        guard parts.count == 2, !parts[0].isEmpty, parts[1].contains("."), !e.contains(" ") else {
            throw .invalid("\"\(email)\" is not an email address (name@example.com)")
        }
        return e
    }

    private static func checkEmailsFree(_ emails: [String], for name: String, in info: ContainerInfo) throws(CKError) {
        for e in emails {
            if let other = info.users.values.first(where: { $0.name != name && $0.emails.contains(e) }) {
                throw CKError(.invalidArguments, "email \(e) already belongs to user \(other.name); an address finds one user")
            }
        }
    }
}
