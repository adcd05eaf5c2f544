import CloudStore
import Foundation

extension StoreView {
    /// Saves a record file's text as the record at `target`, with every check of an API save
    /// (F2). The file's place decides the record: its folder is the type and its name the
    /// record name, so `cp a.json b.json` makes record b. The text's `recordChangeTag` is the
    /// version the edit is based on (F4): a stale one fails with ESTALE; text without one
    /// replaces the record whatever its version. Text equal to the record saves nothing.
    func save(_ text: [UInt8], as target: RecordTarget, caller: CallerContext) throws(FSError) {
        let json: JSONValue
        do { json = try JSONParser.parse(text) } catch {
            throw FSError(EINVAL, text.isEmpty ? "the file is empty; a record file holds one JSON object" : "not valid JSON at \(error.description)")
        }
        guard case .object(var object) = json else {
            throw FSError(EINVAL, "a record file holds one JSON object with \"fields\", not \(json.kindName)")
        }
        if let type = object["recordType"], type.stringValue != target.type {
            throw FSError(EINVAL, "the text says recordType \(type.stringValue.map { "\"\($0)\"" } ?? "(not a string)") but the file is in folder \(target.type); put it in that type's folder or fix recordType")
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
            record = try db.fitToSchema(try RecordCoding.decode(.object(object), mode: .input, zoneID: db.zoneID(target.zone)))
        } catch {
            throw FSError(error.errno, "\(error.code.name): \(error.message)")
        }
        let current = try catalog(target.database, target.zone).record(named: target.name)
        if let current {
            if current.recordType == record.recordType, current.fields == record.fields { return }
            if record.recordChangeTag == nil { record.recordChangeTag = current.recordChangeTag }
        } else {
            record.recordChangeTag = nil
        }
        let result: ModifyResult
        do { result = try db.modify(saving: [record]) } catch { throw error.fsError }
        if let error = result.error {
            let item = error.partialErrorsByItemID?.values.first ?? error
            if item.code == .serverRecordChanged {
                throw FSError(ESTALE, "serverRecordChanged: record \(target.name) changed since this text was read (the text's recordChangeTag is \(record.recordChangeTag ?? "none"), the stored one \(item.serverRecordValue?.recordChangeTag ?? "?")); read the file again and redo the edit, or drop \"recordChangeTag\" from the text to overwrite")
            }
            throw error.fsError
        }
        stateLock.withLock { hidden[target] = nil }
        _ = try? catalog(target.database, target.zone)
    }
}
