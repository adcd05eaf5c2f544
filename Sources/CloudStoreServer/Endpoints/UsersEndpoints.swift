import CloudStore

/// `users/current` and `users/caller`: who the signed-in user is.
enum UsersEndpoints {
    /// The user dictionary: the user record name; ckfs identities have no first or last name.
    static func current(_ call: WebCall) throws(CKError) -> JSONValue {
        let identity = try signedIn(call)
        return .object(["userRecordName": .string(identity.userRecordName), "firstName": .null, "lastName": .null])
    }

    /// The caller's user identity: record name, lookup info, and the identity's name as the given name.
    static func caller(_ call: WebCall) throws(CKError) -> JSONValue {
        let identity = try signedIn(call)
        var lookup: [String: JSONValue] = ["userRecordName": .string(identity.userRecordName)]
        if let email = identity.emails.first { lookup["emailAddress"] = .string(email) }
        return .object(["users": .array([.object([
            "userRecordName": .string(identity.userRecordName),
            "lookupInfo": .object(lookup),
            "nameComponents": .object(["givenName": .string(identity.name)]),
        ])])])
    }

    private static func signedIn(_ call: WebCall) throws(CKError) -> Identity {
        guard let identity = try call.container.identity(of: call.caller.caller) else {
            throw CKError(.notAuthenticated, "the caller has no identity in container \(call.container.identifier); sign in with ckfs token sign-in --user NAME")
        }
        return identity
    }
}
