import Foundation

// A change fetch's client change token from the zone's index: the `tokens` table holds every
// token the log's entries gave, so the answer is one lookup instead of the log read backwards
// to its last token (up to the log's whole 32 MiB). The table is kept up by whoever asks: it
// is brought up to the index's own state from the log (the entries after the last one it
// holds, or, when those are gone or of another history, every token line of the log), so it
// needs no new index format and an older ckfs that uses the index meanwhile does no harm.
extension ZoneFolder {
    /// The client change token of the last entry up to `seq` that gave one, from the zone's
    /// index when it has one (brought up to the log's end first): `.some(nil)` when none did;
    /// nil when there is no index to ask, or it does not reach `seq`, and the log is read.
    func indexedClientChangeToken(upTo seq: Int64) -> Data?? {
        // Only an index that is there: a change fetch does not make one (that takes seconds
        // at 100,000 records); it reads the log back instead.
        guard case .some(.some) = try? openIndex(create: false), let index = currentIndex() else { return nil }
        do throws(CKError) {
            guard let state = try index.state(), state.applied >= seq else { return nil }
            // One read when the tokens' table holds every token up to the index's state.
            if let answer = try lookUp(upTo: seq, reaching: state, in: index) { return .some(answer) }
            try bringTokensUp(to: state, in: index)
            if let answer = try lookUp(upTo: seq, reaching: state, in: index) { return .some(answer) }
            throw CKError(.internalError, "the index's client change tokens do not reach entry \(seq)")
        } catch {
            Self.indexLogger.notice("the index of zone \(zoneID.zoneName) gave no client change token (\(error)); the log is read instead")
            if Self.isDamage(error) { removeDamagedIndexFiles(error) }
            return nil
        }
    }

    /// The token up to `seq` (`.some(nil)`: none), when the tokens' table holds every token up
    /// to the index's `state`; nil when it does not.
    private func lookUp(upTo seq: Int64, reaching state: ZoneIndexFile.State, in index: ZoneIndexFile) throws(CKError) -> Data?? {
        try index.read { (reader) throws(CKError) -> Data?? in
            guard try reader.tokensState() == state else { return nil }
            return .some(try reader.clientChangeToken(upTo: seq))
        }
    }

    /// Brings the tokens' table up to the index's `state`, in one write transaction: from the
    /// entries after the last one it holds when that entry is in the log as it was, else from
    /// every token line of the log (tokens of entries compacted away are then `zone.json`'s
    /// concern, as they are for a read of the log).
    private func bringTokensUp(to state: ZoneIndexFile.State, in index: ZoneIndexFile) throws(CKError) {
        let meta = try readMeta()
        try index.update(waitingMilliseconds: 10_000) { (current, writer) throws(CKError) -> ZoneIndexFile.State? in
            // The state under the write lock: another process may have moved it meanwhile.
            guard let current, current.epoch == meta.epoch else { return current }
            try writer.makeTokenTables()
            var caughtUp = false
            if let held = try writer.tokensState(), held.epoch == current.epoch, held.applied <= current.applied,
               try isLogged(held), let page = try history(after: held.applied, changeLimit: nil, meta: meta, withClientChangeToken: false) {
                try writer.removeTokens(after: held.applied)
                for entry in page.entries where entry.seq <= current.applied {
                    if let token = entry.clientChangeToken { try writer.putClientChangeToken(token, seq: entry.seq) }
                }
                caughtUp = true
            }
            if !caughtUp {
                try writer.removeTokens(after: nil)
                for (seq, token) in try loggedClientChangeTokens() where seq <= current.applied {
                    try writer.putClientChangeToken(token, seq: seq)
                }
            }
            try writer.setTokensState(current)
            return current
        }
    }

    /// Every client change token the log's entries gave, with each entry's number, reading
    /// the whole log but parsing only the lines that start like an entry with a token.
    private func loggedClientChangeTokens() throws(CKError) -> [(seq: Int64, token: Data)] {
        guard let bytes = try Syscall.readFile(logPath).orThrow(.internalError, "cannot read \(logPath)") else { return [] }
        noteLogRead(bytes.count)
        return LogScanner.clientChangeTokens(bytes, lineEnds: LogScanner.lineEnds(bytes), zoneID: zoneID)
    }
}
