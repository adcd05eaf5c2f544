import Foundation
import Testing
import TestSupport
@testable import CloudStore

/// Writes a zone's commit marker in place, keeping the apply marker after it (crash states
/// built by hand).
func rewriteCommitMarker(_ lock: String, _ marker: CommitMarker) throws {
    let handle = try #require(FileHandle(forWritingAtPath: lock))
    handle.write(Data(marker.bytes()))
    try handle.close()
}
