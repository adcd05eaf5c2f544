/// Reads a JSON file; nil when it does not exist.
func readJSONFile(_ path: String) throws(CKError) -> JSONValue? {
    guard let bytes = try Syscall.readFile(path).orThrow(.internalError, "cannot read \(path)") else { return nil }
    do { return try JSONParser.parse(bytes) } catch {
        throw CKError(.internalError, "\(path) is not valid JSON; fix it or restore it from a backup, then run `ckfs fsck`", cause: .syntax(error))
    }
}
