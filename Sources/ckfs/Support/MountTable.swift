import Foundation

func absolute(_ path: String) -> String {
    let full = path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
    return URL(fileURLWithPath: full).standardizedFileURL.path
}

/// Reads /proc/self/mountinfo.
enum MountTable {
    static func isMounted(_ path: String) -> Bool {
        guard let text = try? String(contentsOfFile: "/proc/self/mountinfo", encoding: .utf8) else { return false }
        let escaped = path.replacingOccurrences(of: " ", with: "\\040")
        return text.split(separator: "\n").contains { line in
            let f = line.split(separator: " ")
            return f.count > 4 && f[4] == escaped && line.contains("fuse")
        }
    }
}
