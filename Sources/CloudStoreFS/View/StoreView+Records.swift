import CloudStore

extension StoreView {
    // MARK: A zone's records as the view reads them

    /// Asks a zone's catalog, brought up to date (``catalog(_:_:)``), with its error as the
    /// file system reports it.
    private func fromCatalog<T>(_ d: DatabaseKey, _ zone: String, _ ask: (ZoneCatalog) throws(CKError) -> T) throws(FSError) -> T {
        let cat = try catalog(d, zone)
        do throws(CKError) { return try ask(cat) } catch { throw error.fsError }
    }

    /// The record named `name` in a zone, whatever its type; nil when there is none.
    func storedRecord(_ d: DatabaseKey, _ zone: String, named name: String) throws(FSError) -> Record? {
        try fromCatalog(d, zone) { (cat) throws(CKError) in try cat.record(named: name) }
    }

    /// Names of a zone's records of one type, in order.
    func recordNames(_ d: DatabaseKey, _ zone: String, type: String) throws(FSError) -> [String] {
        try fromCatalog(d, zone) { (cat) throws(CKError) in try cat.names(ofType: type) }
    }

    func hasRecords(_ d: DatabaseKey, _ zone: String, type: String) throws(FSError) -> Bool {
        try fromCatalog(d, zone) { (cat) throws(CKError) in try cat.hasRecords(ofType: type) }
    }

    /// The record types a zone has records of, sorted.
    func recordTypes(_ d: DatabaseKey, _ zone: String) throws(FSError) -> [String] {
        try fromCatalog(d, zone) { (cat) throws(CKError) in try cat.recordTypes() }
    }
}
