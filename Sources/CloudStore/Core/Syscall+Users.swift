import CCloudStoreShims
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension Syscall {
    /// Whether this process is a static executable (as `scripts/install` links ckfs): it has no
    /// program interpreter. glibc would still load into it the name-service modules
    /// `/etc/nsswitch.conf` names beyond `files` (`libnss_systemd` on Debian), which crash in a
    /// static process at the first name that `/etc/passwd` lacks; such a process reads
    /// `/etc/passwd` itself (``PasswdFile``).
    static let isStaticExecutable: Bool = CCloudStoreShims_isStaticExecutable() != 0

    /// The name of the OS user `uid`; nil when the password database has none.
    public static func userName(uid: UInt32) -> String? {
        if isStaticExecutable { return PasswdFile.read().first { $0.uid == uid }?.name }
        var pw = passwd()
        var result: UnsafeMutablePointer<passwd>?
        var buf = [CChar](repeating: 0, count: 4096)
        guard getpwuid_r(uid, &pw, &buf, buf.count, &result) == 0, result != nil else { return nil }
        return String(cString: pw.pw_name)
    }

    /// The uid of the OS user named `name`; nil when there is none.
    public static func uid(ofUserNamed name: String) -> UInt32? {
        if isStaticExecutable { return PasswdFile.read().first { $0.name == name }?.uid }
        var pw = passwd()
        var result: UnsafeMutablePointer<passwd>?
        var buf = [CChar](repeating: 0, count: 4096)
        guard getpwnam_r(name, &pw, &buf, buf.count, &result) == 0, result != nil else { return nil }
        return pw.pw_uid
    }
}

/// `/etc/passwd` read as its `files` name service reads it: `name:password:uid:gid:…` a line,
/// `#` comments and NIS's `+`/`-` lines skipped. Only a static executable reads it so
/// (``Syscall/isStaticExecutable``); users of other name services (LDAP, systemd's dynamic
/// users) are then unknown to it by name and uid, and shown as `uid<N>`.
package enum PasswdFile {
    package struct Entry: Equatable {
        package let name: String
        package let uid: UInt32
    }

    package static func read(_ path: String = "/etc/passwd") -> [Entry] {
        guard case .success(let bytes?) = Syscall.readFile(path) else { return [] }
        return parse(String(decoding: bytes, as: UTF8.self))
    }

    package static func parse(_ text: String) -> [Entry] {
        text.split(separator: "\n").compactMap { line -> Entry? in
            guard let first = line.first, first != "#", first != "+", first != "-" else { return nil }
            let fields = line.split(separator: ":", omittingEmptySubsequences: false)
            guard fields.count >= 3, !fields[0].isEmpty, let uid = UInt32(fields[2]) else { return nil }
            return Entry(name: String(fields[0]), uid: uid)
        }
    }
}
