import CloudStore

/// `subscriptions/list`, `subscriptions/lookup` and `subscriptions/modify`: the caller's own
/// subscriptions, as the CLI and the Swift API see them.
enum SubscriptionsEndpoints {
    static func list(_ call: WebCall) throws(CKError) -> JSONValue {
        let db = try call.subscriptionDatabase()
        return .object(["subscriptions": .array(try db.subscriptions().map { WebSubscriptionCoding.encode($0, db: db) })])
    }

    /// One subscription or error per ID asked for. Apple's path has no database: there the
    /// private database is looked in first, then the public one.
    static func lookup(_ call: WebCall) throws(CKError) -> JSONValue {
        let databases: [Database]
        if call.scope != nil {
            databases = [try call.subscriptionDatabase()]
        } else {
            databases = [try call.database(.private), try call.database(.public)]
        }
        var out: [JSONValue] = []
        for (i, entry) in try call.array("subscriptions", limit: RecordsEndpoints.maxItems).enumerated() {
            guard let id = entry["subscriptionID"]?.stringValue else {
                throw CKError(.invalidArguments, "subscriptions[\(i)] needs a \"subscriptionID\"")
            }
            var found: JSONValue?
            var lastError = CKError(.unknownItem, "no subscription \(id)")
            for db in databases where found == nil {
                do throws(CKError) { found = WebSubscriptionCoding.encode(try db.subscription(id), db: db) } catch { lastError = error }
            }
            out.append(found ?? WebSubscriptionCoding.error(lastError, subscriptionID: id))
        }
        return .object(["subscriptions": .array(out)])
    }

    /// Creates, updates and deletes subscriptions, each on its own; one result per operation.
    static func modify(_ call: WebCall) throws(CKError) -> JSONValue {
        let db = try call.subscriptionDatabase()
        let operations = try call.array("operations", limit: RecordsEndpoints.maxItems)
        enum Planned { case save(Subscription), delete(String), failed(CKError, String?) }
        var planned: [Planned] = []
        var seen: Set<String> = []
        for op in operations {
            let id = op["subscription"]?["subscriptionID"]?.stringValue
            do throws(CKError) {
                // The engine saves before it deletes; one operation per ID keeps the order moot.
                if let id, !seen.insert(id).inserted {
                    throw CKError(.invalidArguments, "subscription \(id) has two operations in one request; send one")
                }
                guard let kind = op["operationType"]?.stringValue, let raw = op["subscription"] else {
                    throw CKError(.invalidArguments, "an operation needs \"operationType\" (create, update or delete) and \"subscription\"")
                }
                switch kind {
                case "create", "update":
                    if kind == "update" {
                        guard let id else { throw CKError(.invalidArguments, "an update needs the \"subscriptionID\" it changes") }
                        _ = try db.subscription(id)
                    }
                    planned.append(.save(try WebSubscriptionCoding.decode(raw, db: db)))
                case "delete":
                    guard let id else { throw CKError(.invalidArguments, "a delete needs the \"subscriptionID\"") }
                    planned.append(.delete(id))
                default:
                    throw CKError(.invalidArguments, "unknown operationType \"\(kind)\"; use create, update or delete")
                }
            } catch {
                planned.append(.failed(error, id))
            }
        }
        var saving: [Subscription] = []
        var deleting: [String] = []
        for case .save(let s) in planned { saving.append(s) }
        for case .delete(let id) in planned { deleting.append(id) }
        let result = try db.modifySubscriptions(saving: saving, deleting: deleting)
        var saved = result.saved.makeIterator()
        var deleted = result.deleted.makeIterator()
        var out: [JSONValue] = []
        for item in planned {
            switch item {
            case .failed(let error, let id):
                out.append(WebSubscriptionCoding.error(error, subscriptionID: id))
            case .save:
                guard let (id, r) = saved.next() else { continue }
                switch r {
                case .success(let s): out.append(WebSubscriptionCoding.encode(s, db: db))
                case .failure(let error): out.append(WebSubscriptionCoding.error(error, subscriptionID: id))
                }
            case .delete:
                guard let (id, r) = deleted.next() else { continue }
                switch r {
                case .success: out.append(.object(["subscriptionID": .string(id), "deleted": .bool(true)]))
                case .failure(let error): out.append(WebSubscriptionCoding.error(error, subscriptionID: id))
                }
            }
        }
        return .object(["subscriptions": .array(out)])
    }
}
