import Foundation
import Testing
@testable import CloudStore

/// The password file as a static ckfs reads it (no name-service modules): the same names and
/// uids glibc's `files` service gives.
@Suite struct PasswdFileTests {
    @Test func linesAreReadAsTheFilesServiceReadsThem() {
        let text = """
            root:x:0:0:root:/root:/bin/bash
            # a comment:x:5:5
            +nisuser::::::
            -blocked::::::
            broken line without fields
            :x:7:7:no name:/:/bin/sh
            bad:x:notanumber:1::/:/bin/sh
            mei:x:1001:1001:Mei,,,:/home/mei:/bin/zsh

            """
        #expect(PasswdFile.parse(text) == [.init(name: "root", uid: 0), .init(name: "mei", uid: 1001)])
    }

    /// Every user of this machine's /etc/passwd is found by glibc under the same uid; a uid
    /// the file lacks is no one's. (This test process is dynamic, so `Syscall` asks glibc.)
    @Test func theMachinesPasswordFileAgreesWithGlibc() throws {
        #expect(!Syscall.isStaticExecutable)
        let entries = PasswdFile.read()
        try #require(entries.contains(.init(name: "root", uid: 0)))
        for entry in entries {
            #expect(Syscall.uid(ofUserNamed: entry.name) == entry.uid, "\(entry)")
        }
        let unknown = UInt32(3_999_999)
        #expect(!entries.contains { $0.uid == unknown })
        #expect(Syscall.userName(uid: unknown) == nil)
    }
}
