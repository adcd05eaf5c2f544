import ArgumentParser
import CloudStore

/// The options of `ckfs mount -o LIST`, as mount(8) hands them to `mount.fuse.ckfs` from a
/// `mount -t fuse.ckfs` call or an fstab line: ckfs's own, and mount(8)'s, which change
/// nothing here.
struct MountOptions: Equatable {
    var allowOther = false
    var readOnly = false
    var containers: [String] = []
    var environment: CloudStore.Environment?

    /// mount(8)'s own options and the kernel's mount flags, which reach a helper too; a FUSE
    /// mount of ckfs is always nosuid and nodev, and ckfs sets its own permissions.
    static let ignored: Set<String> = [
        "rw", "defaults", "auto", "noauto", "nofail", "_netdev", "user", "nouser", "users", "owner", "group",
        "suid", "nosuid", "dev", "nodev", "exec", "noexec", "atime", "noatime", "relatime", "norelatime",
        "strictatime", "nostrictatime", "diratime", "nodiratime", "lazytime", "nolazytime", "async", "sync",
        "silent", "loud", "default_permissions",
    ]

    static let help = "allow_other, ro, container=ID (repeatable: show only these containers), environment=development|production"

    /// Parses comma-separated lists; an empty list is no option.
    init(_ lists: [String]) throws {
        for item in lists.flatMap({ $0.split(separator: ",", omittingEmptySubsequences: true) }).map(String.init) {
            let (name, value) = item.firstIndex(of: "=").map { (String(item[..<$0]), String(item[item.index(after: $0)...])) } ?? (item, nil)
            switch (name, value) {
            case ("allow_other", nil): allowOther = true
            case ("ro", nil): readOnly = true
            case ("container", let id?) where !id.isEmpty: containers.append(id)
            case ("environment", let e?):
                guard let env = CloudStore.Environment(rawValue: e) else {
                    throw ValidationError("-o environment=\(e): the environment is development or production")
                }
                environment = env
            // mount(8) adds user=NAME for a user mount, and comment= and x-* are for other tools.
            case ("user", _?), ("comment", _?): continue
            case (let n, _) where n.hasPrefix("x-"): continue
            case (let n, nil) where Self.ignored.contains(n): continue
            default:
                throw ValidationError("-o \(item): not a ckfs mount option; ckfs takes \(Self.help), and mount(8)'s own options")
            }
        }
    }
}
