import ArgumentParser
import CloudStore
import Foundation

/// One JSON line on standard output, in one write.
func emit(_ value: JSONValue) {
    FileHandle.standardOutput.write(Data((JSONWriter.compactString(value) + "\n").utf8))
}
