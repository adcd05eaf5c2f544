import CloudStore
import Foundation
import Logging

extension StoreView {
    // MARK: Items: records and key-value entries alike

    /// An item's text as its file shows it, and its version; nil when there is no such item.
    func current(_ target: ItemTarget) throws(FSError) -> (text: [UInt8], tag: String)? {
        switch target {
        case .record(let t):
            guard let r = try renderedRecord(t, keep: true) else { return nil }
            return (r.bytes, r.tag)
        case .keyValue(let ref, let key):
            return try keyValueText(ref, key)
        }
    }

    /// A public record another user created, or a shared one the shares do not let the
    /// caller change, is not changed, moved or removed here (EACCES), asked before the view
    /// does anything about it, so nothing is hidden or half done.
    func checkMayChange(_ target: ItemTarget, deleting: Bool, caller: CallerContext) throws(FSError) {
        guard case .record(let t) = target else { return }
        if t.database.scope == .shared { return try checkMayChangeShared(t, deleting: deleting, caller: caller) }
        guard t.database.scope == .public, let r = try storedRecord(t.database, t.zone, named: t.name) else { return }
        let db = try database(t.database, caller: caller)
        do throws(CKError) { try db.checkMayChange(r, deleting: deleting) } catch {
            logger.notice("refused \(deleting ? "removal" : "change") of \(mountPath(target)) by uid \(caller.uid): \(error.message)")
            throw error.fsError
        }
    }

    func exists(_ target: ItemTarget) throws(FSError) -> Bool {
        switch target {
        case .record(let t):
            return try recordStat(t) != nil
        case .keyValue(let ref, let key):
            return try keyValues(ref).entries[key] != nil
        }
    }

    /// What `stat` shows for an item; nil when there is none.
    func itemAttributes(_ target: ItemTarget, inode: UInt64) throws(FSError) -> NodeAttributes? {
        switch target {
        case .record(let t):
            guard let r = try recordStat(t) else { return nil }
            return attributes(of: r, t, inode: inode)
        case .keyValue(let ref, let key):
            return try keyValueAttributes(ref, key, inode: inode)
        }
    }

    /// Checks the name of an item about to be made: a record name (EINVAL) or a key (ENAMETOOLONG, EINVAL).
    func checkItemName(_ target: ItemTarget) throws(FSError) {
        switch target {
        case .record(let t):
            do { try Names.checkRecordName(t.name) } catch { throw FSError(Posix.EINVAL, "\(t.fileName): \(error.message)") }
        case .keyValue(let ref, let key):
            try checkKey(key, ref: ref)
        }
    }

    /// Refuses a name in an item folder that would make a file never saved (``ItemFileName/refusal(_:)``).
    func checkNotAnUnsavableItemName(_ folder: NodeKey, _ fileName: String) throws(FSError) {
        let naming: ItemFileName
        switch folder {
        case .recordType: naming = .record
        case .keyValueFolder: naming = .keyValue
        default: return
        }
        if let why = naming.refusal(fileName) {
            logger.notice("refused the name \(fileName.debugDescription): \(why)")
            throw FSError(Posix.EINVAL, why)
        }
    }

    /// Saves a file's text as the item it names, with every check an API save makes.
    func save(_ text: [UInt8], as target: ItemTarget, caller: CallerContext) throws(FSError) {
        notifier?.willWait()
        switch target {
        case .record(let t): try saveRecord(text, as: t, caller: caller)
        case .keyValue(let ref, let key): try saveKeyValue(text, ref, key: key)
        }
        // Saved again: no longer hidden behind a scratch copy.
        scratch.unhide(target)
    }

    func deleteItem(_ target: ItemTarget, caller: CallerContext) throws(FSError) {
        notifier?.willWait()
        switch target {
        case .record(let t): try deleteRecord(t, caller: caller)
        case .keyValue(let ref, let key):
            do { try deleteKeyValue(ref, key: key) } catch {
                logger.notice("refused delete of \(mountPath(target)): \(error.reason)")
                throw error
            }
        }
    }

    // MARK: Records

    /// Saves a record file's text as the record at `target`, with every check of an API save.
    /// The file's place decides the record: its folder is the type and its name the
    /// record name, so `cp a.json b.json` makes record b. The text's `recordChangeTag` is the
    /// version the edit is based on: a stale one fails with ESTALE; text without one
    /// replaces the record whatever its version. Text equal to the record saves nothing.
    func saveRecord(_ text: [UInt8], as target: RecordTarget, caller: CallerContext) throws(FSError) {
        let json: JSONValue
        do { json = try JSONParser.parse(text) } catch {
            throw FSError(Posix.EINVAL, text.isEmpty ? "the file is empty; a record file holds one JSON object" : "not valid JSON at \(error.description)")
        }
        guard case .object(var object) = json else {
            throw FSError(Posix.EINVAL, "a record file holds one JSON object with \"fields\", not \(json.kindName)")
        }
        if let type = object["recordType"], type.stringValue != target.type {
            throw FSError(Posix.EINVAL, "the text says recordType \(type.stringValue.map { "\"\($0)\"" } ?? "(not a string)") but the file is in folder \(target.type); put it in that type's folder or fix recordType")
        }
        if let name = object["recordName"]?.stringValue, name != target.name {
            // A copy of another record under a new name: its version means nothing here.
            object["recordChangeTag"] = nil
        }
        object["recordType"] = .string(target.type)
        object["recordName"] = .string(target.name)
        object["zoneID"] = nil
        let db = try database(target.database, caller: caller)
        var record: Record
        do {
            record = try db.recordToSave(.object(object), zoneID: db.zoneID(target.zone))
        } catch {
            throw FSError(error.errno, "\(error.code.name): \(error.message)")
        }
        let current = try storedRecord(target.database, target.zone, named: target.name)
        // Text equal to the record saves nothing, when it is based on that version (or on
        // none): equal text based on an older one is a lost update (two writers making the
        // same change from one read), refused like any stale save. Equal means the fields and
        // the parent (which a text without a version changes only when it names one); a
        // share's text, whose participants the comparison would have to read as the engine
        // does, is always saved.
        if let current, !record.isShare, current.recordType == record.recordType, current.fields == record.fields,
           current.encryptedKeys == record.encryptedKeys,
           current.parent == record.parent || (record.recordChangeTag == nil && !record.changedKeys.contains(Record.parentKey)),
           record.recordChangeTag == nil || record.recordChangeTag == current.recordChangeTag { return }
        // A file made anew (`cp`, `tar x` from another store) creates the record, whatever
        // version its text came from.
        if current == nil { record.recordChangeTag = nil }
        var options = ModifyOptions()
        if record.recordChangeTag == nil {
            // Text without a version replaces the record whatever its version, checked and
            // written under the zone's lock: every field the text leaves out is removed.
            options.savePolicy = .allKeys
            for key in current.map({ Array($0.fields.keys) }) ?? [] where record.fields[key] == nil { record[key] = nil }
        }
        let result: ModifyResult
        do { result = try db.modify(saving: [record], options: options) } catch { throw error.fsError }
        logNotificationErrors(result)
        if let error = result.error {
            let item = error.partialErrors?.values.first ?? error
            if item.code == .serverRecordChanged {
                throw FSError(Posix.ESTALE, "serverRecordChanged: record \(target.name) changed since this text was read (the text's recordChangeTag is \(record.recordChangeTag ?? "none"), the stored one \(item.serverRecordValue?.recordChangeTag ?? "?")); read the file again and redo the edit, or drop \"recordChangeTag\" from the text to overwrite")
            }
            throw error.fsError
        }
        logger.debug("saved \(mountPath(.record(target))) as uid \(caller.uid) (tag \(result.savedRecords.first?.recordChangeTag ?? "?"))")
        _ = try? catalog(target.database, target.zone)
    }
}

extension StoreView {
    /// A save stood but its subscribers were not notified: only the log can say so.
    func logNotificationErrors(_ result: ModifyResult) {
        for e in result.notificationErrors { logger.warning("saved, but subscribers were not notified: \(e)") }
    }
}
