import CloudStore

extension CKError {
    /// The one place a CloudKit error becomes an errno for the kernel (the table in docs/Mount.md#errors).
    var errno: Int32 {
        switch code {
        case .invalidArguments, .referenceViolation, .badContainer: Posix.EINVAL
        case .limitExceeded: Posix.EFBIG
        // A full disk is ENOSPC, as on any file system; a ckfs quota or the disk's is EDQUOT.
        case .quotaExceeded: diskFull ?? Posix.EDQUOT
        case .serverRecordChanged: Posix.ESTALE
        case .permissionFailure, .notAuthenticated: Posix.EACCES
        case .unknownItem, .zoneNotFound, .assetFileNotFound: Posix.ENOENT
        case .constraintViolation: Posix.EEXIST
        case .partialFailure:
            partialErrors?.values.first { $0.code != .batchRequestFailed }?.errno ?? Posix.EIO
        default: Posix.EIO
        }
    }

    /// A CloudKit error as the file system reports it.
    var fsError: FSError {
        let detail = partialErrors?.values.first { $0.code != .batchRequestFailed }
        return FSError(errno, detail.map { "\($0.code.name): \($0.message)" } ?? "\(code.name): \(message)")
    }
}
