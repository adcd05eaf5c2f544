/// What the engine keeps in memory of a whole zone: `deleteSelf` edges for cascades.
struct DeleteSelfEdges {
    var referrers: [String: Set<String>] = [:]
    var targets: [String: [String]] = [:]

    mutating func insert(_ record: Record) {
        let name = record.recordID.recordName
        remove(name, keepReferrers: true)
        let ts = record.deleteSelfReferences.map(\.target)
        if !ts.isEmpty { targets[name] = ts }
        for t in ts { referrers[t, default: []].insert(name) }
    }

    mutating func remove(_ name: String, keepReferrers: Bool = false) {
        for t in targets[name] ?? [] {
            referrers[t]?.remove(name)
            if referrers[t]?.isEmpty == true { referrers[t] = nil }
        }
        targets[name] = nil
    }
}
