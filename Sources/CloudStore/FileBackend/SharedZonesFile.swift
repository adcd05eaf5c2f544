/// `<container>/<environment>/shared-zones.json`, changed under the `flock` of
/// `shared-zones.lock` beside it and replaced durably.
struct SharedZonesFile: SharedZoneStorage {
    /// The environment's folder in the container's.
    let directory: String
    let writer: FileWriter

    var path: String { directory + "/shared-zones.json" }
    private var lockPath: String { directory + "/shared-zones.lock" }
    var location: String { path }

    /// Nil when the file is missing or is not this file (damaged). A failure to read it
    /// throws: the engine must not make the list again while a save that has put its zone in
    /// has not committed its share yet.
    func read() throws(CKError) -> [SharedZone]? {
        guard let bytes = try Syscall.readFile(path).orThrow(.internalError, "cannot read \(path)"),
              let json = try? JSONParser.parse(bytes), let zones = json["zones"]?.arrayValue else { return nil }
        var out: [SharedZone] = []
        for z in zones {
            guard let owner = z["owner"]?.stringValue, let zone = z["zone"]?.stringValue else { return nil }
            out.append(SharedZone(owner: owner, zone: zone))
        }
        return out
    }

    func update<T>(_ body: ([SharedZone]?) throws(CKError) -> ([SharedZone]?, T)) throws(CKError) -> T {
        try writer.makeDirectories(directory)
        return try withFileLock(lockPath) { () throws(CKError) -> T in
            let (kept, result) = try body(try read())
            if let kept { try write(kept) }
            return result
        }
    }

    private func write(_ entries: [SharedZone]) throws(CKError) {
        let zones = entries.sorted().map { JSONValue.object(["owner": .string($0.owner), "zone": .string($0.zone)]) }
        try writer.replace(path, with: JSONWriter.pretty(.object(["zones": .array(zones)])), durable: true)
    }
}
