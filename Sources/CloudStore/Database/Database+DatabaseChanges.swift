import Foundation

/// Where a database's zones stood when their changes were last fetched: each zone's change
/// token. Opaque to clients as a string.
public struct DatabaseChangeToken: Sendable, Equatable, CustomStringConvertible {
    public var zones: [String: ChangeToken]

    public init(zones: [String: ChangeToken]) { self.zones = zones }

    /// Reads a token's string; nil when it is not one this store wrote.
    public init?(string: String) {
        var text = string.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while text.count % 4 != 0 { text += "=" }
        guard let data = Data(base64Encoded: text) else { return nil }
        var zones: [String: ChangeToken] = [:]
        for line in String(decoding: data, as: UTF8.self).split(separator: "\n") {
            let parts = line.split(separator: " ")
            guard parts.count == 2, let token = ChangeToken(string: String(parts[1])) else { return nil }
            zones[String(parts[0])] = token
        }
        self.zones = zones
    }

    /// Base64url of one `zone epoch-seq` line per zone: zone names hold no spaces or newlines.
    public var description: String {
        let text = zones.keys.sorted().map { "\($0) \(zones[$0]!)" }.joined(separator: "\n")
        return Data(text.utf8).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }
}

/// Which zones of a database changed since a token.
public struct DatabaseChanges: Sendable {
    /// Zones created or changed (records saved or deleted), by name order.
    public var changed: [ZoneID]
    /// Zones deleted since the token.
    public var deleted: [ZoneID]
    public var token: DatabaseChangeToken
    /// More zones changed than `limit`: fetch again with `token`.
    public var moreComing: Bool
}

extension Database {
    /// The zones that changed since `token` (nil: every zone, as for a first sync), at most
    /// `limit` of them. A zone deleted and made again counts as changed.
    public func databaseChanges(since token: DatabaseChangeToken?, limit: Int? = nil) throws(CKError) -> DatabaseChanges {
        if let limit, limit < 1 { throw CKError(.invalidArguments, "a database change fetch's limit must be at least 1, not \(limit)") }
        var now: [String: ChangeToken] = [:]
        for name in try zoneNames() {
            // In a shared database, only the zones shared with the caller (SharedDatabase
            // puts every owner's together).
            if scope == .shared, (try? currentGrants(name)) == nil { continue }
            // A zone deleted while this runs is simply not there.
            guard let t = try? storedChangeToken(in: name) else { continue }
            now[name] = t
        }
        return DatabaseChanges(from: token, to: now, limit: limit) { zoneID($0) }
    }
}

extension DatabaseChanges {
    /// The zones whose tokens differ between `token` and `now` (a zone's key → its token now),
    /// in key order, at most `limit`: changed when `now` has it, deleted when only `token` had
    /// it; `zoneID` names a zone by its key.
    init(from token: DatabaseChangeToken?, to now: [String: ChangeToken], limit: Int?, zoneID: (String) -> ZoneID) {
        let before = token?.zones ?? [:]
        var events: [(key: String, token: ChangeToken?)] = []
        for (key, t) in now where before[key] != t { events.append((key, t)) }
        for key in before.keys where now[key] == nil { events.append((key, nil)) }
        events.sort { $0.key < $1.key }
        var more = false
        if let limit, events.count > limit {
            events = Array(events.prefix(limit))
            more = true
        }
        var next = before
        for e in events { next[e.key] = e.token }
        self.init(changed: events.filter { $0.token != nil }.map { zoneID($0.key) },
                  deleted: events.filter { $0.token == nil }.map { zoneID($0.key) },
                  token: DatabaseChangeToken(zones: next), moreComing: more)
    }
}
