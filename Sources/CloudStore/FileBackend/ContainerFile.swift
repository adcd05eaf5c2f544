/// What a container keeps, in the file backend: `container.json` in the container's folder,
/// read whole and replaced whole under an exclusive `flock` on the folder's `lock`.
struct ContainerFile: ContainerStorage {
    /// The container's identifier: its folder's name, whatever the file says.
    let identifier: String
    let directory: String
    let path: String
    let writer: FileWriter
    /// The quotas of a file that names none.
    let defaults: StoreSettings

    var lockPath: String { directory + "/lock" }

    /// The file's inode and change time (ns); nil when there is none.
    func version() -> ContainerVersion? {
        guard case .success(let status?) = Syscall.stat(path, times: true) else { return nil }
        return ContainerVersion(stamp: [Int64(bitPattern: status.inode), status.changedNanos])
    }

    /// Refused while a copy (`ckfs import`) makes the container: its folder has the copy's
    /// mark (`FileStoreBackend+CopyMarks`).
    func read() throws(CKError) -> ContainerInfo? {
        if FileStoreBackend.isMarked(directory) {
            throw CKError(.badContainer, "container \(identifier) is being imported, or an import of it stopped part way (\(FileStoreBackend.copyMark(in: directory)) says so); let the import finish, or run it again: it makes the container anew")
        }
        guard let json = try readJSONFile(path) else { return nil }
        var info = try ContainerInfo(json: json, defaults: defaults, path: path)
        info.identifier = identifier
        return info
    }

    func create(_ initial: ContainerInfo) throws(CKError) {
        try writer.makeDirectories(directory)
        if try readJSONFile(path) != nil { return }
        try withFileLock(lockPath) { () throws(CKError) in
            if try readJSONFile(path) == nil { try write(initial) }
        }
    }

    func update<T>(fallback: ContainerInfo, _ body: (inout ContainerInfo) throws(CKError) -> T) throws(CKError)
        -> (result: T, info: ContainerInfo) {
        try withFileLock(lockPath) { () throws(CKError) -> (result: T, info: ContainerInfo) in
            let before = try read() ?? fallback
            var info = before
            let result = try body(&info)
            if info != before { try write(info) }
            return (result, info)
        }
    }

    private func write(_ info: ContainerInfo) throws(CKError) {
        try writer.replace(path, with: JSONWriter.pretty(info.json()), durable: true)
    }
}
