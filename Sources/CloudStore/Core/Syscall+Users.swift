#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension Syscall {
    /// The name of the OS user `uid`; nil when the password database has none.
    public static func userName(uid: UInt32) -> String? {
        var pw = passwd()
        var result: UnsafeMutablePointer<passwd>?
        var buf = [CChar](repeating: 0, count: 4096)
        guard getpwuid_r(uid, &pw, &buf, buf.count, &result) == 0, result != nil else { return nil }
        return String(cString: pw.pw_name)
    }

    /// The uid of the OS user named `name`; nil when there is none.
    public static func uid(ofUserNamed name: String) -> UInt32? {
        var pw = passwd()
        var result: UnsafeMutablePointer<passwd>?
        var buf = [CChar](repeating: 0, count: 4096)
        guard getpwnam_r(name, &pw, &buf, buf.count, &result) == 0, result != nil else { return nil }
        return pw.pw_uid
    }
}
