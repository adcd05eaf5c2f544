import CSQLite

/// The one file that calls SQLite: a connection and prepared statements. The engine keeps each
/// zone's index in SQLite (``ZoneIndexFile``); the bench's baseline rows use it too. Errors are
/// ``CKError`` with SQLite's message, and its result code as the cause.
///
/// Not thread-safe: each owner serializes its use (``ZoneIndexFile`` under its lock).
package final class SQLiteDatabase {
    private var handle: OpaquePointer?
    package let path: String

    /// How a connection keeps its commits.
    package enum Durability {
        /// WAL with `synchronous=FULL`: every commit is durable, as every acknowledged ckfs save is.
        case full
        /// WAL with `synchronous=NORMAL`: a commit survives the process being killed, and a
        /// power loss may take back the last ones, never leaving the file damaged. For data
        /// that can be rebuilt, such as an index.
        case rebuildable
    }

    /// Opens (creating) `path` in WAL mode.
    package init(path: String, durability: Durability = .full, create: Bool = true) throws(CKError) {
        self.path = path
        let flags = SQLITE_OPEN_READWRITE | (create ? SQLITE_OPEN_CREATE : 0) | SQLITE_OPEN_NOMUTEX
        let rc = sqlite3_open_v2(path, &handle, flags, nil)
        guard rc == SQLITE_OK else {
            let message = handle.map { String(cString: sqlite3_errmsg($0)) } ?? "out of memory"
            sqlite3_close(handle)
            handle = nil
            throw Self.error("cannot open SQLite database \(path): \(message)", code: rc)
        }
        // Another process opening the same file at once holds its lock for a moment.
        sqlite3_busy_timeout(handle, 10_000)
        // The WAL and its index stay when a connection closes: a connection to a file that was
        // replaced since (an index made again) would otherwise delete, by name, the new one's.
        var persist: Int32 = 1
        sqlite3_file_control(handle, "main", SQLITE_FCNTL_PERSIST_WAL, &persist)
        try execute("PRAGMA journal_mode=WAL")
        try execute(durability == .full ? "PRAGMA synchronous=FULL" : "PRAGMA synchronous=NORMAL")
    }

    deinit { sqlite3_close(handle) }

    /// How long a statement waits for another connection's lock before it fails with `SQLITE_BUSY`.
    package func setBusyTimeout(milliseconds: Int32) { sqlite3_busy_timeout(handle, milliseconds) }

    package func execute(_ sql: String) throws(CKError) {
        var error: UnsafeMutablePointer<CChar>?
        let rc = sqlite3_exec(handle, sql, nil, nil, &error)
        guard rc == SQLITE_OK else {
            let message = error.map { String(cString: $0) } ?? "?"
            sqlite3_free(error)
            throw Self.error("SQLite: \(message) in \(sql) (\(path))", code: sqlite3_extended_errcode(handle))
        }
    }

    package func prepare(_ sql: String) throws(CKError) -> Statement {
        var statement: OpaquePointer?
        let rc = sqlite3_prepare_v2(handle, sql, -1, &statement, nil)
        guard rc == SQLITE_OK, let statement else {
            throw Self.error("SQLite: \(message) in \(sql) (\(path))", code: rc)
        }
        return Statement(statement, db: self)
    }

    /// Runs `body` in a transaction that takes the write lock at once (`BEGIN IMMEDIATE`):
    /// committed when `body` returns, rolled back when it throws.
    package func writeTransaction<T>(_ body: () throws(CKError) -> T) throws(CKError) -> T {
        try execute("BEGIN IMMEDIATE")
        do {
            let result = try body()
            try execute("COMMIT")
            return result
        } catch {
            try? execute("ROLLBACK")
            throw error
        }
    }

    /// Runs `body` in a read transaction: every statement sees one state of the database.
    package func readTransaction<T>(_ body: () throws(CKError) -> T) throws(CKError) -> T {
        try execute("BEGIN")
        defer { try? execute("COMMIT") }
        return try body()
    }

    fileprivate var message: String { String(cString: sqlite3_errmsg(handle)) }
    fileprivate var errorCode: Int32 { sqlite3_extended_errcode(handle) }

    /// Whether `error` says another connection holds the lock.
    package static func isBusy(_ error: CKError) -> Bool {
        guard case .database(let code)? = error.cause else { return false }
        return code & 0xff == SQLITE_BUSY || code & 0xff == SQLITE_LOCKED
    }

    /// Whether an (extended) result code says the file is damaged: not a database, damaged
    /// pages, or shorter than its header says.
    package static func isDamage(_ code: Int32) -> Bool {
        code & 0xff == SQLITE_CORRUPT || code & 0xff == SQLITE_NOTADB || code == SQLITE_IOERR | (2 << 8) /* SQLITE_IOERR_SHORT_READ */
    }

    /// Whether `error` says a statement could not be prepared as written (`SQLITE_ERROR`): it
    /// names a table or column the database does not have, or is not SQL.
    package static func isStatementError(_ error: CKError) -> Bool {
        guard case .database(let code)? = error.cause else { return false }
        return code == SQLITE_ERROR
    }

    /// Whether an (extended) result code says the disk is full.
    package static func isFull(_ code: Int32) -> Bool { code & 0xff == SQLITE_FULL }

    private static func error(_ message: String, code: Int32) -> CKError {
        CKError(.internalError, message, cause: .database(code))
    }

    /// A prepared statement, reset at each use.
    package final class Statement {
        private let statement: OpaquePointer
        private let db: SQLiteDatabase

        fileprivate init(_ statement: OpaquePointer, db: SQLiteDatabase) {
            self.statement = statement
            self.db = db
        }

        deinit { sqlite3_finalize(statement) }

        package func bind(_ values: [Value]) {
            sqlite3_reset(statement)
            sqlite3_clear_bindings(statement)
            for (i, v) in values.enumerated() {
                let at = Int32(i + 1)
                switch v {
                case .int(let n): sqlite3_bind_int64(statement, at, n)
                case .double(let d): sqlite3_bind_double(statement, at, d)
                // SQLITE_TRANSIENT: SQLite copies the bytes; their count given, so a NUL in the
                // string is kept.
                case .text(let s): sqlite3_bind_text(statement, at, s, Int32(s.utf8.count), unsafeBitCast(-1, to: sqlite3_destructor_type.self))
                case .null: sqlite3_bind_null(statement, at)
                }
            }
        }

        /// Runs the statement to its end.
        package func run(_ values: [Value] = []) throws(CKError) {
            bind(values)
            while true {
                let rc = sqlite3_step(statement)
                if rc == SQLITE_DONE { break }
                guard rc == SQLITE_ROW else { throw SQLiteDatabase.error("SQLite: \(db.message) (\(db.path))", code: db.errorCode) }
            }
            sqlite3_reset(statement)
        }

        /// Binds `values` and calls `body` with each row until it returns false or the rows end.
        package func forEachRow(_ values: [Value] = [], _ body: (Row) throws(CKError) -> Bool) throws(CKError) {
            bind(values)
            defer { sqlite3_reset(statement) }
            while true {
                let rc = sqlite3_step(statement)
                if rc == SQLITE_DONE { return }
                guard rc == SQLITE_ROW else { throw SQLiteDatabase.error("SQLite: \(db.message) (\(db.path))", code: db.errorCode) }
                guard try body(Row(statement: statement)) else { return }
            }
        }

        /// The work SQLite did for this statement since the last call (its virtual machine's
        /// steps), for tests that check what a query costs.
        package func takeWork() -> Int { Int(sqlite3_stmt_status(statement, SQLITE_STMTSTATUS_VM_STEP, 1)) }

        /// The first column of every row, as text.
        package func texts(_ values: [Value] = []) throws(CKError) -> [String] {
            var out: [String] = []
            try forEachRow(values) { row in
                out.append(row.text(0))
                return true
            }
            return out
        }

        /// The first column of every row, as bytes.
        package func rows(_ values: [Value] = []) throws(CKError) -> [[UInt8]] {
            var out: [[UInt8]] = []
            try forEachRow(values) { row in
                out.append(row.bytes(0))
                return true
            }
            return out
        }
    }

    /// The current row of a statement; valid only inside ``Statement/forEachRow(_:_:)``'s body.
    package struct Row {
        fileprivate let statement: OpaquePointer

        package func value(_ column: Int32) -> Value {
            switch sqlite3_column_type(statement, column) {
            case SQLITE_INTEGER: .int(sqlite3_column_int64(statement, column))
            case SQLITE_FLOAT: .double(sqlite3_column_double(statement, column))
            case SQLITE_NULL: .null
            default: .text(text(column))
            }
        }

        package func int(_ column: Int32) -> Int64 { sqlite3_column_int64(statement, column) }

        package func text(_ column: Int32) -> String {
            guard let p = sqlite3_column_text(statement, column) else { return "" }
            return String(decoding: UnsafeRawBufferPointer(start: p, count: Int(sqlite3_column_bytes(statement, column))), as: UTF8.self)
        }

        package func bytes(_ column: Int32) -> [UInt8] {
            let count = Int(sqlite3_column_bytes(statement, column))
            guard let p = sqlite3_column_blob(statement, column) else { return [] }
            return Array(UnsafeRawBufferPointer(start: p, count: count))
        }
    }

    package enum Value: Equatable, Sendable {
        case int(Int64)
        case double(Double)
        case text(String)
        case null
    }
}
