import CloudStore
import Glibc

extension CKError {
    /// The one place a CloudKit error becomes an errno for the kernel (the table in docs/Mount.md#errors).
    var errno: Int32 {
        switch code {
        case .invalidArguments, .referenceViolation, .badContainer: EINVAL
        case .limitExceeded: EFBIG
        // A full disk is ENOSPC, as on any file system; a ckfs quota or the disk's is EDQUOT.
        case .quotaExceeded: diskFull ?? EDQUOT
        case .serverRecordChanged: ESTALE
        case .permissionFailure, .notAuthenticated: EACCES
        case .unknownItem, .zoneNotFound, .assetFileNotFound: ENOENT
        case .constraintViolation: EEXIST
        case .partialFailure:
            partialErrors?.values.first { $0.code != .batchRequestFailed }?.errno ?? EIO
        default: EIO
        }
    }

    /// A CloudKit error as the file system reports it.
    var fsError: FSError {
        let detail = partialErrors?.values.first { $0.code != .batchRequestFailed }
        return FSError(errno, detail.map { "\($0.code.name): \($0.message)" } ?? "\(code.name): \(message)")
    }
}
