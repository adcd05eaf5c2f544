import CloudStore

/// `records/resolve` and `records/accept`: what a share's short GUID names, and accepting it
/// as the signed-in user. Apple's reference puts both under the `public` database's path; the
/// caller's own databases answer them too.
enum SharingEndpoints {
    /// One result per short GUID: the share, its zone, its owner and the caller's part in it,
    /// with the root record when asked; a `NOT_FOUND` or `ACCESS_DENIED` error for a GUID
    /// that names no share the caller may open.
    static func resolve(_ call: WebCall) throws(CKError) -> JSONValue {
        try results(call) { (found, guid, entry) throws(CKError) -> JSONValue in
            let user = try call.container.userRecordName(for: call.caller.caller)
            guard Container.mayOpen(found, user: user) else {
                throw CKError(.permissionFailure, "you are not a participant of share \(guid); ask its owner to add you")
            }
            return try result(call, found, guid: guid, user: user, entry: entry)
        }
    }

    /// Accepts each share as the caller; one result per short GUID, as `records/resolve` gives.
    static func accept(_ call: WebCall) throws(CKError) -> JSONValue {
        try results(call) { (_, guid, entry) throws(CKError) -> JSONValue in
            let accepted = try call.container.acceptShare(url: guid, caller: call.caller.caller, environment: call.environment)
            let user = try call.container.userRecordName(for: call.caller.caller)
            return try result(call, accepted, guid: guid, user: user, entry: entry)
        }
    }

    private static func results(_ call: WebCall, _ each: (ShareLocation, String, JSONValue) throws(CKError) -> JSONValue) throws(CKError) -> JSONValue {
        var out: [JSONValue] = []
        for (i, entry) in try call.array("shortGUIDs", limit: RecordsEndpoints.maxItems).enumerated() {
            guard let guid = entry["value"]?.stringValue ?? entry.stringValue else {
                throw CKError(.invalidArguments, "shortGUIDs[\(i)] needs \"value\", the short GUID of a share (the end of its URL)")
            }
            do throws(CKError) {
                out.append(try each(try call.container.share(url: guid, environment: call.environment), guid, entry))
            } catch {
                guard case .object(var o) = error.webServicesDictionary() else { continue }
                o["shortGUID"] = .string(guid)
                out.append(.object(o))
            }
        }
        return .object(["results": .array(out)])
    }

    /// A share as Web Services describe one for a user: the share record, its zone, the root
    /// record (when `shouldFetchRootRecord`), the owner and the user's part.
    private static func result(_ call: WebCall, _ found: ShareLocation, guid: String, user: String, entry: JSONValue) throws(CKError) -> JSONValue {
        let info = found.info
        let me = info.participant(user)
        let owned = found.ownerName == user
        var o: [String: JSONValue] = [
            "shortGUID": .string(info.shortGUID),
            "containerIdentifier": .string(call.container.identifier),
            "environment": .string(call.environment.rawValue),
            "databaseScope": .string(owned ? "PRIVATE" : "SHARED"),
            "zoneID": WebRecordCoding.encode(found.zoneID),
            "share": call.encode(found.share(seenBy: user)),
            "ownerIdentity": .object(["userRecordName": .string(found.ownerName)]),
            "participantPermission": .string((me?.permission ?? info.publicPermission).rawValue),
            "participantStatus": .string((me?.acceptanceStatus ?? .pending).rawValue),
            "participantType": .string((me?.role ?? .publicUser).rawValue),
        ]
        if let root = info.rootRecordName {
            o["rootRecordName"] = .string(root)
            if entry["shouldFetchRootRecord"]?.boolValue == true,
               let record = try call.container.shareRoot(found, caller: call.caller.caller, desiredKeys: try call.desiredKeys(entry["rootRecordDesiredKeys"]),
                                                         environment: call.environment) {
                o["rootRecord"] = call.encode(record)
            }
        }
        return .object(o)
    }
}
