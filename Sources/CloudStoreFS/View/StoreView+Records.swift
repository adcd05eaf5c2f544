import CloudStore

extension StoreView {
    // MARK: A zone's records as the view reads them

    /// Asks a zone's catalog, brought up to date (``catalog(_:_:)``), with its error as the
    /// file system reports it.
    private func fromCatalog<T>(_ d: DatabaseKey, _ zone: String, _ ask: (any ZoneCatalog) throws(CKError) -> T) throws(FSError) -> T {
        let cat = try catalog(d, zone)
        do throws(CKError) { return try ask(cat) } catch { throw error.fsError }
    }

    /// The record named `name` in a zone, whatever its type; nil when there is none (or, in a
    /// shared zone, when it is not shared with the caller).
    func storedRecord(_ d: DatabaseKey, _ zone: String, named name: String) throws(FSError) -> Record? {
        if d.scope == .shared { return try sharedRecord(named: name, d, zone, catalog: try catalog(d, zone)) }
        return try fromCatalog(d, zone) { (cat) throws(CKError) in try cat.record(named: name) }
    }

    /// Names of a zone's records of one type, in order; in a shared zone those shared with
    /// the caller.
    func recordNames(_ d: DatabaseKey, _ zone: String, type: String) throws(FSError) -> [String] {
        let cat = try catalog(d, zone)
        let names: [String]
        do throws(CKError) { names = try cat.names(ofType: type) } catch { throw error.fsError }
        guard d.scope == .shared else { return names }
        var shown: [String] = []
        for name in names where try isShared(name, d, zone, catalog: cat) { shown.append(name) }
        return shown
    }

    func hasRecords(_ d: DatabaseKey, _ zone: String, type: String) throws(FSError) -> Bool {
        let cat = try catalog(d, zone)
        return try hasRecords(d, zone, type: type, catalog: cat)
    }

    /// The record types a zone has records of, sorted; in a shared zone those of the records
    /// shared with the caller.
    func recordTypes(_ d: DatabaseKey, _ zone: String) throws(FSError) -> [String] {
        let cat = try catalog(d, zone)
        let types: [String]
        do throws(CKError) { types = try cat.recordTypes() } catch { throw error.fsError }
        guard d.scope == .shared else { return types }
        var shown: [String] = []
        for type in types where try hasRecords(d, zone, type: type, catalog: cat) { shown.append(type) }
        return shown
    }

    /// ``hasRecords(_:_:type:)`` with the zone's catalog, brought up to date already.
    private func hasRecords(_ d: DatabaseKey, _ zone: String, type: String, catalog cat: any ZoneCatalog) throws(FSError) -> Bool {
        let names: [String]
        do throws(CKError) {
            guard d.scope == .shared else { return try cat.hasRecords(ofType: type) }
            names = try cat.names(ofType: type)
        } catch {
            throw error.fsError
        }
        for name in names where try isShared(name, d, zone, catalog: cat) { return true }
        return false
    }
}
