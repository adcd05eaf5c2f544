import CloudStore

extension StoreView {
    // MARK: A zone's records as the view reads them

    /// The record named `name` in a zone, whatever its type; nil when there is none.
    func storedRecord(_ d: DatabaseKey, _ zone: String, named name: String) throws(FSError) -> Record? {
        let cat = try catalog(d, zone)
        do throws(CKError) { return try cat.record(named: name) } catch { throw error.fsError }
    }

    /// Names of a zone's records of one type, in order.
    func recordNames(_ d: DatabaseKey, _ zone: String, type: String) throws(FSError) -> [String] {
        let cat = try catalog(d, zone)
        do throws(CKError) { return try cat.names(ofType: type) } catch { throw error.fsError }
    }

    func hasRecords(_ d: DatabaseKey, _ zone: String, type: String) throws(FSError) -> Bool {
        let cat = try catalog(d, zone)
        do throws(CKError) { return try cat.hasRecords(ofType: type) } catch { throw error.fsError }
    }

    /// The record types a zone has records of, sorted.
    func recordTypes(_ d: DatabaseKey, _ zone: String) throws(FSError) -> [String] {
        let cat = try catalog(d, zone)
        do throws(CKError) { return try cat.recordTypes() } catch { throw error.fsError }
    }
}
