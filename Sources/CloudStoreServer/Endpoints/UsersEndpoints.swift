import CloudStore

/// `users/current` and `users/caller` (who the signed-in user is), discovery, and the older
/// lookups by email, ID and contacts.
enum UsersEndpoints {
    /// The user dictionary: the user record name, and the identity's name as the first name (as
    /// the lookups give it; ckfs identities have no last name). The caller sees their own.
    static func current(_ call: WebCall) throws(CKError) -> JSONValue {
        let identity = try signedIn(call)
        return .object(["userRecordName": .string(identity.userRecordName), "firstName": .string(identity.name), "lastName": .null])
    }

    /// The caller's user identity: record name, lookup info, and the identity's name as the given
    /// name. Apple's reference gives it as `users`, an array of one identity; Apple's CloudKit JS
    /// (`fetchCurrentUserIdentity`, and the sign-in check of `setUpAuth`) reads the identity's keys
    /// at the top level of the answer. Both readings get it.
    static func caller(_ call: WebCall) throws(CKError) -> JSONValue {
        let identity = try signedIn(call)
        var lookup: [String: JSONValue] = ["userRecordName": .string(identity.userRecordName)]
        if let email = identity.emails.first { lookup["emailAddress"] = .string(email) }
        let fields: [String: JSONValue] = [
            "userRecordName": .string(identity.userRecordName),
            "lookupInfo": .object(lookup),
            "nameComponents": .object(["givenName": .string(identity.name)]),
        ]
        return .object(fields.merging(["users": .array([.object(fields)])]) { old, _ in old })
    }

    /// `GET users/discover`: the discoverable users among the caller's contacts, as identities.
    static func discoverAll(_ call: WebCall) throws(CKError) -> JSONValue {
        .object(["users": .array(try call.container.discoverAllIdentities(caller: call.caller.caller).map(identity))])
    }

    /// `POST users/discover`: the identities found for `lookupInfos` (by email address or user
    /// record name); those not found, or not discoverable, are left out.
    static func discover(_ call: WebCall) throws(CKError) -> JSONValue {
        var out: [JSONValue] = []
        for (i, info) in try call.array("lookupInfos", limit: RecordsEndpoints.maxItems).enumerated() {
            if let email = info["emailAddress"]?.stringValue {
                if let found = try call.container.discoverIdentity(email: email, caller: call.caller.caller) { out.append(identity(found)) }
            } else if let name = info["userRecordName"]?.stringValue {
                if let found = try call.container.discoverIdentity(userRecordName: name, caller: call.caller.caller) { out.append(identity(found)) }
            } else if info["phoneNumber"] == nil {
                throw CKError(.invalidArguments, "lookupInfos[\(i)] needs \"emailAddress\" or \"userRecordName\"")
            }
            // ckfs identities have no phone numbers: a phone number finds nobody.
        }
        return .object(["users": .array(out)])
    }

    /// `POST users/lookup/email` and `users/lookup/id` (deprecated): user dictionaries of the
    /// discoverable users asked for.
    static func lookupByEmail(_ call: WebCall) throws(CKError) -> JSONValue {
        var out: [JSONValue] = []
        for entry in try call.array("users", limit: RecordsEndpoints.maxItems) {
            guard let email = entry["emailAddress"]?.stringValue else { throw CKError(.invalidArguments, "each of \"users\" needs \"emailAddress\"") }
            if let found = try call.container.discoverIdentity(email: email, caller: call.caller.caller) {
                out.append(.object(["userRecordName": .string(found.userRecordName), "firstName": .string(found.name),
                                    "lastName": .null, "emailAddress": .string(email)]))
            }
        }
        return .object(["users": .array(out)])
    }

    static func lookupByID(_ call: WebCall) throws(CKError) -> JSONValue {
        var out: [JSONValue] = []
        for entry in try call.array("users", limit: RecordsEndpoints.maxItems) {
            guard let name = entry["userRecordName"]?.stringValue else { throw CKError(.invalidArguments, "each of \"users\" needs \"userRecordName\"") }
            if let found = try call.container.discoverIdentity(userRecordName: name, caller: call.caller.caller) {
                out.append(.object(["userRecordName": .string(found.userRecordName), "firstName": .string(found.name), "lastName": .null]))
            }
        }
        return .object(["users": .array(out)])
    }

    /// `POST users/lookup/contacts` (deprecated): the discoverable contacts, as user dictionaries.
    static func lookupContacts(_ call: WebCall) throws(CKError) -> JSONValue {
        .object(["users": .array(try call.container.discoverAllIdentities(caller: call.caller.caller).map {
            .object(["userRecordName": .string($0.userRecordName), "firstName": .string($0.name), "lastName": .null])
        })])
    }

    private static func identity(_ found: DiscoveredIdentity) -> JSONValue {
        var lookup: [String: JSONValue] = ["userRecordName": .string(found.userRecordName)]
        if let email = found.emails.first { lookup["emailAddress"] = .string(email) }
        return .object(["userRecordName": .string(found.userRecordName), "lookupInfo": .object(lookup),
                        "nameComponents": .object(["givenName": .string(found.name)])])
    }

    private static func signedIn(_ call: WebCall) throws(CKError) -> Identity {
        guard let identity = try call.container.identity(of: call.caller.caller) else {
            throw CKError(.notAuthenticated, "the caller has no identity in container \(call.container.identifier); sign in with ckfs token sign-in --user NAME")
        }
        return identity
    }
}
