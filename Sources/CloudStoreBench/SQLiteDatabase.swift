import CSQLite
import CloudStore

/// The one file that calls SQLite: a connection and prepared statements, enough for the
/// baseline rows. Errors are ``CKError`` with SQLite's message.
final class SQLiteDatabase {
    private var handle: OpaquePointer?

    /// Opens (creating) `path` in WAL mode with `synchronous=FULL`: every commit is durable,
    /// as every acknowledged ckfs save is.
    init(path: String) throws(CKError) {
        guard sqlite3_open_v2(path, &handle, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nil) == SQLITE_OK else {
            let message = handle.map { String(cString: sqlite3_errmsg($0)) } ?? "out of memory"
            sqlite3_close(handle)
            throw CKError(.internalError, "cannot open SQLite database \(path): \(message)")
        }
        try execute("PRAGMA journal_mode=WAL")
        try execute("PRAGMA synchronous=FULL")
    }

    deinit { sqlite3_close(handle) }

    func execute(_ sql: String) throws(CKError) {
        var error: UnsafeMutablePointer<CChar>?
        guard sqlite3_exec(handle, sql, nil, nil, &error) == SQLITE_OK else {
            let message = error.map { String(cString: $0) } ?? "?"
            sqlite3_free(error)
            throw CKError(.internalError, "SQLite: \(message) in \(sql)")
        }
    }

    func prepare(_ sql: String) throws(CKError) -> Statement {
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(handle, sql, -1, &statement, nil) == SQLITE_OK, let statement else {
            throw CKError(.internalError, "SQLite: \(String(cString: sqlite3_errmsg(handle))) in \(sql)")
        }
        return Statement(statement, db: self)
    }

    fileprivate var message: String { String(cString: sqlite3_errmsg(handle)) }

    /// A prepared statement, reset after each use.
    final class Statement {
        private let statement: OpaquePointer
        private let db: SQLiteDatabase

        fileprivate init(_ statement: OpaquePointer, db: SQLiteDatabase) {
            self.statement = statement
            self.db = db
        }

        deinit { sqlite3_finalize(statement) }

        func bind(_ values: [Value]) {
            sqlite3_reset(statement)
            sqlite3_clear_bindings(statement)
            for (i, v) in values.enumerated() {
                switch v {
                case .int(let n): sqlite3_bind_int64(statement, Int32(i + 1), n)
                // SQLITE_TRANSIENT: SQLite copies the bytes.
                case .text(let s): sqlite3_bind_text(statement, Int32(i + 1), s, -1, unsafeBitCast(-1, to: sqlite3_destructor_type.self))
                }
            }
        }

        /// Runs the statement to its end.
        func run(_ values: [Value] = []) throws(CKError) {
            bind(values)
            let rc = sqlite3_step(statement)
            guard rc == SQLITE_DONE || rc == SQLITE_ROW else { throw CKError(.internalError, "SQLite: \(db.message)") }
        }

        /// The first column of every row, as bytes.
        func rows(_ values: [Value] = []) throws(CKError) -> [[UInt8]] {
            bind(values)
            var out: [[UInt8]] = []
            while true {
                let rc = sqlite3_step(statement)
                if rc == SQLITE_DONE { return out }
                guard rc == SQLITE_ROW else { throw CKError(.internalError, "SQLite: \(db.message)") }
                let count = Int(sqlite3_column_bytes(statement, 0))
                if let p = sqlite3_column_blob(statement, 0) {
                    out.append(Array(UnsafeRawBufferPointer(start: p, count: count)))
                } else {
                    out.append([])
                }
            }
        }
    }

    enum Value {
        case int(Int64)
        case text(String)
    }
}
