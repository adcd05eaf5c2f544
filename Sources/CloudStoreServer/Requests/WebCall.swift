import CloudStore
import CloudStoreServerCore

/// One authenticated request to an endpoint: the container, environment and database of its
/// URL, who it acts as, and its JSON body.
struct WebCall: Sendable {
    let container: Container
    let environment: Environment
    /// nil for endpoints without a database segment (`tokens/…`).
    let scope: DatabaseScope?
    let caller: WebCaller
    let body: JSONValue
    /// `http://host:port` as the client reached the server, for URLs in responses.
    let baseURL: String
    let assets: AssetStaging
    let databases: DatabaseCache

    /// Who staged assets and download URLs belong to.
    var assetOwner: AssetStaging.Owner {
        AssetStaging.Owner(container: container.identifier, environment: environment, scope: scope ?? .public, userName: caller.caller.userName)
    }

    /// A record as responses give it, with `numbersAsStrings` as asked and download URLs.
    func encode(_ record: Record) -> JSONValue { encode(record, numbersAsStrings: numbersAsStrings) }

    /// A record as responses give it, with `numbersAsStrings` as given (a zone dictionary of
    /// `changes/zone` may ask for it alone).
    func encode(_ record: Record, numbersAsStrings: Bool) -> JSONValue {
        let owner = assetOwner
        let zone = record.recordID.zoneID
        let me = { () -> String? in try? container.userRecordName(for: caller.caller) }
        return WebRecordCoding.encode(record, numbersAsStrings: numbersAsStrings, caller: me) { asset in
            baseURL + assets.downloadPath(owner, zone: zone, asset: asset)
        }
    }

    /// A record of the request, with its asset receipts checked against this caller.
    func record(_ json: JSONValue, zone: ZoneID, db: Database) throws(CKError) -> Record {
        let owner = assetOwner
        return try WebRecordCoding.record(json, zone: zone, db: db) { (receipt) throws(CKError) -> String in
            try assets.stagedFile(receipt: receipt, owner: owner)
        }
    }

    /// After `sent` was saved as `stored`: the uploads it named by receipt are in its zone now,
    /// and their staged copies go (``AssetStaging/saved(stagedPath:as:)``).
    func settleUploads(sent: Record, stored: Record, db: Database) {
        for (key, value) in sent.fields {
            let given: [Asset] = switch value {
            case .asset(let a): [a]
            case .list(.asset, let values): values.compactMap { if case .asset(let a) = $0 { a } else { nil } }
            default: []
            }
            for (n, asset) in given.enumerated() {
                guard let path = asset.pendingFile, assets.isStaged(path) else { continue }
                let kept: Asset? = switch stored[key] {
                case .asset(let a)?: a
                case .list(.asset, let values)?: values.indices.contains(n) ? { if case .asset(let a) = values[n] { a } else { nil } }() : nil
                default: nil
                }
                if let kept, let file = try? db.assetFile(kept, zone: stored.recordID.zoneID.zoneName) { assets.saved(stagedPath: path, as: file) }
            }
        }
    }

    /// The database of the URL as the caller sees it; in the shared database, the zones of the
    /// owner the body's `zoneID` names.
    func database() throws(CKError) -> Database {
        guard scope == .shared else { return try database(scope ?? .public) }
        // The request's zone, else the first one an entry names.
        return try database(forZone: body["zoneID"] ?? body["records"]?.arrayValue?.first?["zoneID"]
            ?? body["operations"]?.arrayValue?.first?["record"]?["zoneID"])
    }

    /// The database holding the zone `zoneID` names: in the shared database, its owner's zones
    /// as the caller reaches them (`ownerRecordName` is needed there); else the URL's.
    func database(forZone zoneID: JSONValue?) throws(CKError) -> Database {
        guard scope == .shared else { return try database() }
        guard let owner = zoneID?["ownerRecordName"]?.stringValue ?? zoneID?["ownerName"]?.stringValue else {
            throw CKError(.invalidArguments, "zones of the shared database belong to other users: give each zoneID its owner, as {\"zoneName\": \"Lists\", \"ownerRecordName\": \"_…\"} (zones/list gives them)")
        }
        return try shared().database(owner: owner)
    }

    /// Where the caller's subscriptions of the URL's database are: in the shared database, the
    /// caller's own (no owner's zone is named).
    func subscriptionDatabase() throws(CKError) -> Database {
        scope == .shared ? try shared().subscriptions : try database()
    }

    /// The caller's shared database.
    func shared() throws(CKError) -> SharedDatabase {
        try container.sharedDatabase(caller: caller.caller, environment: environment)
    }

    func database(_ scope: DatabaseScope) throws(CKError) -> Database {
        try databases.database(container, scope, caller: caller.caller, environment: environment)
    }

    /// A key of the body that must be an array, with at most `limit` entries.
    func array(_ key: String, limit: Int? = nil, required: Bool = true) throws(CKError) -> [JSONValue] {
        switch body[key] {
        case .array(let items)?:
            if let limit, items.count > limit {
                throw CKError(.limitExceeded, "\"\(key)\" has \(items.count) entries; CloudKit Web Services take at most \(limit) in one request: split it")
            }
            return items
        case nil, .null?:
            guard !required else { throw CKError(.invalidArguments, "the request body needs \"\(key)\", an array") }
            return []
        default:
            throw CKError(.invalidArguments, "\"\(key)\" must be an array")
        }
    }

    /// `desiredKeys`: nil (all fields) unless the body gives a list.
    func desiredKeys(_ json: JSONValue?) throws(CKError) -> [String]? {
        switch json {
        case nil, .null?: return nil
        case .array(let keys)?:
            var names: [String] = []
            for k in keys {
                guard let s = k.stringValue else { throw CKError(.invalidArguments, "\"desiredKeys\" must be an array of field names") }
                names.append(s)
            }
            return names
        default: throw CKError(.invalidArguments, "\"desiredKeys\" must be an array of field names")
        }
    }

    var numbersAsStrings: Bool { body["numbersAsStrings"]?.boolValue ?? body["numberAsStrings"]?.boolValue ?? false }
}
