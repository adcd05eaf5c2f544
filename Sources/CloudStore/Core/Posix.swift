#if canImport(Glibc)
import Glibc
#endif

/// The C library's constants the package's modules name: errno values, open(2) flags, flock(2)
/// operations, signals and the standard descriptors. They come through Core, as the calls do
/// through ``Syscall``, so that no file above Core reaches into the C library; the FUSE kernel
/// layer, which speaks the kernel's own structures through libfuse, is the one other place.
/// The names are the C library's, so that a reader who knows open(2) reads them as such.
package enum Posix {
    // errno values.
    package static let EACCES = Glibc.EACCES
    package static let EBADF = Glibc.EBADF
    package static let EDQUOT = Glibc.EDQUOT
    package static let EEXIST = Glibc.EEXIST
    package static let EFBIG = Glibc.EFBIG
    package static let EINVAL = Glibc.EINVAL
    package static let EIO = Glibc.EIO
    package static let EISDIR = Glibc.EISDIR
    package static let ENAMETOOLONG = Glibc.ENAMETOOLONG
    package static let ENOENT = Glibc.ENOENT
    package static let ENOSPC = Glibc.ENOSPC
    package static let ENOTCONN = Glibc.ENOTCONN
    package static let ENOTDIR = Glibc.ENOTDIR
    package static let ENOTEMPTY = Glibc.ENOTEMPTY
    package static let EPERM = Glibc.EPERM
    package static let ESTALE = Glibc.ESTALE
    package static let EXDEV = Glibc.EXDEV

    // open(2) flags.
    package static let O_ACCMODE = Glibc.O_ACCMODE
    package static let O_APPEND = Glibc.O_APPEND
    package static let O_CREAT = Glibc.O_CREAT
    package static let O_DIRECTORY = Glibc.O_DIRECTORY
    package static let O_EXCL = Glibc.O_EXCL
    package static let O_RDONLY = Glibc.O_RDONLY
    package static let O_RDWR = Glibc.O_RDWR
    package static let O_TRUNC = Glibc.O_TRUNC
    package static let O_WRONLY = Glibc.O_WRONLY

    // flock(2) operations.
    package static let LOCK_EX = Glibc.LOCK_EX
    package static let LOCK_NB = Glibc.LOCK_NB
    package static let LOCK_UN = Glibc.LOCK_UN

    // Signals.
    package static let SIGKILL = Glibc.SIGKILL
    package static let SIGTERM = Glibc.SIGTERM

    // Standard descriptors.
    package static let STDIN_FILENO = Glibc.STDIN_FILENO
    package static let STDERR_FILENO = Glibc.STDERR_FILENO

    /// A process ID.
    package typealias pid_t = Glibc.pid_t
}
