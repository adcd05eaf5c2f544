#if canImport(Glibc)
#endif

extension Result where Failure == SystemCallError {
    /// The value, or a ``CKError`` that names the failed call.
    public func orThrow(_ code: CKError.Code = .internalError, _ what: @autoclosure () -> String) throws(CKError) -> Success {
        switch self {
        case .success(let v): return v
        case .failure(let e):
            // A full disk is said by CKError itself (quotaExceeded).
            let hint = e.errno == Posix.EACCES || e.errno == Posix.EPERM ? "; check the permissions of the store directory" : ""
            throw CKError(code, what() + hint, cause: .system(e))
        }
    }
}
