import Foundation

/// The whole lines of a file from an offset on, read in pieces; a last line without its
/// newline (an append in progress) is not given.
struct LogLines {
    let fd: Int32
    let path: String
    let size: Int64
    let noteRead: (Int) -> Void
    /// Bytes read and not yet given, and the file offset of the first of them.
    private var buffer: [UInt8] = []
    private var bufferStart: Int64
    private var position = 0

    init(fd: Int32, path: String, from offset: Int64, size: Int64, noteRead: @escaping (Int) -> Void) {
        self.fd = fd
        self.path = path
        self.size = size
        self.noteRead = noteRead
        bufferStart = offset
    }

    /// The next line without its newline, and where it starts.
    mutating func next() throws(CKError) -> (line: [UInt8], start: Int64)? {
        while true {
            if let nl = buffer[position...].firstIndex(ofByte: 0x0A) {
                let line = Array(buffer[position..<nl])
                let start = bufferStart + Int64(position)
                position = nl + 1
                return (line, start)
            }
            let readFrom = bufferStart + Int64(buffer.count)
            guard readFrom < size else { return nil }
            // Keep the unfinished line, drop what was given, and read the next piece.
            buffer.removeFirst(position)
            bufferStart += Int64(position)
            position = 0
            let count = Int(min(size - readFrom, 256 << 10))
            let bytes = try Syscall.pread(fd, count: count, offset: readFrom, path: path).orThrow(.internalError, "cannot read \(path)")
            noteRead(bytes.count)
            guard !bytes.isEmpty else { return nil }
            buffer += bytes
        }
    }
}
