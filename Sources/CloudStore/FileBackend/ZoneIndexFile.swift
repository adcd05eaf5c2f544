import Foundation

/// A zone's index on disk, `index.sqlite` in the zone's folder: every record's name, type and
/// change sequence, the values of its fields a query filters and sorts on, its `deleteSelf`
/// references, and the client change tokens the log's entries carry. A process that starts
/// cold answers a query or a change fetch from it in a few page reads, instead of reading every
/// record of the zone into memory, or the log back to its last token.
///
/// It is derived data: the log and the record files are the truth. Its `state` row says up to
/// which log entry it holds the zone (`applied`), with that entry's time, device and checksum,
/// so a reader can tell an index that belongs to this log from one restored from elsewhere. Whoever
/// uses it first brings it up to the log's last committed entry (``ZoneFolder`` does that),
/// and it is rebuilt from the files and the log when it is missing, damaged, or too old for
/// the log to bring up to date. Its commits are not synced (`synchronous=NORMAL`): a power loss
/// may take back the last ones, and the log brings them back.
///
/// SQLite rather than a file format of ckfs's own: a B-tree with crash-safe commits, readers
/// beside one writer across processes, and a query planner, all well tested; the record JSON
/// files stay the data people read and edit.
///
/// Each value is kept as SQLite compares it in the order queries compare it: strings in NFC
/// (so byte order is the order of `String.canonicalOrder`), references by record name, dates as
/// seconds since 2001 (a `Date`'s own value, so compared whole), and each element of a list in a
/// row of its own. Bytes, assets and locations
/// are not kept: queries on them read the records.
final class ZoneIndexFile: @unchecked Sendable {
    /// The layout of the tables; an index of another format is rebuilt. 2: dates as seconds
    /// since 2001 (1 kept milliseconds). The client change tokens' tables came later without
    /// a new format (an older ckfs that uses the index meanwhile ignores them): an index
    /// without them gets them at the first change fetch that asks it for a token. So did
    /// `state.checksum`, added by the first state written.
    static let format: Int64 = 2
    static let tables = ["state", "records", "fields", "refs", "tokens", "tokens_state", "pair_keys", "pairs", "pairs_state"]
    /// The client change tokens' tables: every token the log's entries gave, and up to which
    /// entry (the zone's epoch, and `applied`, `time`, `device` as in `state`) they are all
    /// there, which `state` does not say: an older ckfs moves `state` on without them.
    static let tokenTables = """
        CREATE TABLE IF NOT EXISTS tokens(seq INTEGER PRIMARY KEY, token TEXT NOT NULL);
        CREATE TABLE IF NOT EXISTS tokens_state(id INTEGER PRIMARY KEY CHECK (id = 1), epoch TEXT NOT NULL,
                                                applied INTEGER NOT NULL, time INTEGER NOT NULL, device TEXT NOT NULL);
        """
    /// The pair indexes' tables (``Pair``), made when a query first needs one, without a new
    /// format: the pairs kept, their rows, and up to which entry the rows are all there
    /// (`state` does not say it: an older ckfs moves `state` on without them). The primary key
    /// of `pairs` orders the rows of one value of a pair's key by the sort key's `value`, then
    /// `name`, as a query orders them; `pairs_by_name` finds a record's rows when it changes.
    static let pairTables = """
        CREATE TABLE IF NOT EXISTS pair_keys(type TEXT NOT NULL, key TEXT NOT NULL, sort TEXT NOT NULL,
                                             used INTEGER NOT NULL DEFAULT 0,
                                             PRIMARY KEY (type, key, sort)) WITHOUT ROWID;
        CREATE TABLE IF NOT EXISTS pairs(type TEXT NOT NULL, key TEXT NOT NULL, keyValue NOT NULL, sort TEXT NOT NULL,
                                         value NOT NULL, name TEXT NOT NULL,
                                         PRIMARY KEY (type, key, keyValue, sort, value, name)) WITHOUT ROWID;
        CREATE INDEX IF NOT EXISTS pairs_by_name ON pairs(name);
        CREATE TABLE IF NOT EXISTS pairs_state(id INTEGER PRIMARY KEY CHECK (id = 1), epoch TEXT NOT NULL,
                                               applied INTEGER NOT NULL, time INTEGER NOT NULL, device TEXT NOT NULL);
        """
    /// The most pairs a zone's index keeps: each costs every save of its type a row. Past it,
    /// a new pair takes the place of the one used longest ago, if that one is idle.
    static let pairLimit = 8
    /// The indexes beside the tables' own keys, by name: a rebuild drops them and makes them
    /// again after the rows are in (one sort each, instead of an insert in a random place per
    /// row).
    static let secondaryIndexes = [
        ("records_by_type", "CREATE INDEX records_by_type ON records(type, name)"),
        ("fields_by_value", "CREATE INDEX fields_by_value ON fields(key, value, name)"),
        ("refs_by_target", "CREATE INDEX refs_by_target ON refs(target, name)"),
        ("refs_by_name", "CREATE INDEX refs_by_name ON refs(name)"),
    ]

    /// Records written by one update past which the WAL is checkpointed at once.
    static let checkpointAfter = 1_000
    /// The WAL's size past which a writer moves it into the file and empties it after a commit.
    static let walLimit: Int64 = 512 << 10

    let path: String
    /// Guards `db` and the statements: one connection, used by one thread at a time.
    private let lock = NSLock()
    private let db: SQLiteDatabase
    private var statements: [String: SQLiteDatabase.Statement] = [:]
    /// Records put or removed by the current update.
    private var recordsWritten = 0
    /// The pairs the current update keeps up, by record type: none when their rows were not
    /// current at its start (the next query that needs one fills them again).
    private var maintainedPairs: [String: [Pair]] = [:]

    /// A pair index: the records of `type` by their values of `key` and, for each value, in
    /// the order of their values of `sort`. A query `key == v` sorted by `sort` then walks only
    /// its matches, in order, so a page costs what it returns however many records match;
    /// without it the matches are all found and sorted at every page. Made when a query
    /// needs one (``ZoneFolder/keepPair(_:in:)``), the way CloudKit's development environment
    /// adds indexes as queries ask for them.
    struct Pair: Hashable, Sendable {
        var type: String
        var key: String
        var sort: String
    }

    /// How far the index holds the zone.
    struct State: Equatable {
        /// `zone.json`'s epoch: a zone made again is another zone.
        var epoch: String
        /// The last log entry taken in, and its time and device (0 and "" before any).
        var applied: Int64
        var time: Int64
        var device: String
        /// The entry's checksum (``LogEntry/checksum``), which lets a reader check the state
        /// against the log's last bytes (``ZoneFolder/isLogged(_:)``); nil when not known (an
        /// entry taken in by an older ckfs). Kept in `state` only, and not part of where the
        /// index is: states that differ only in it are equal.
        var checksum: UInt32?

        init(epoch: String, applied: Int64, time: Int64, device: String, checksum: UInt32?) {
            self.epoch = epoch
            self.applied = applied
            self.time = time
            self.device = device
            self.checksum = checksum
        }

        /// The state after `entry`, in the zone of `epoch`.
        init(epoch: String, after entry: LogEntry) {
            self.init(epoch: epoch, applied: entry.seq, time: entry.time, device: entry.deviceID, checksum: entry.checksum)
        }

        static func == (a: State, b: State) -> Bool {
            a.epoch == b.epoch && a.applied == b.applied && a.time == b.time && a.device == b.device
        }
    }

    /// Opens the index at `path`; with `create`, makes it (0600, as every store file) when it
    /// is not there. Nil when it is not there and `create` is false.
    static func open(_ path: String, create: Bool) throws(CKError) -> ZoneIndexFile? {
        if case .success(nil) = Syscall.stat(path) {
            guard create else { return nil }
            // Made here so that SQLite opens a file with the store's mode; its -wal and -shm
            // files take the same mode.
            if case .success(let fd) = Syscall.open(path, Posix.O_RDWR | Posix.O_CREAT) { Syscall.close(fd) }
        }
        let index = ZoneIndexFile(path: path, db: try SQLiteDatabase(path: path, durability: .rebuildable, create: false))
        try index.prepareTables()
        return index
    }

    private init(path: String, db: SQLiteDatabase) {
        self.path = path
        self.db = db
    }

    /// Makes the tables of an empty file; an index of another format is emptied and made anew.
    private func prepareTables() throws(CKError) {
        try locked { () throws(CKError) in
            db.setBusyTimeout(milliseconds: 10_000)
            // A rebuild writes the whole index through the WAL: cut it back after checkpoints.
            try db.execute("PRAGMA journal_size_limit = \(4 << 20)")
            var version: Int64 = 0
            try db.prepare("PRAGMA user_version").forEachRow { row in
                version = row.int(0)
                return false
            }
            if version == Self.format { return }
            try db.writeTransaction { () throws(CKError) in
                // Looked at again under the write lock: another process may have made the
                // tables (and filled them) meanwhile.
                var current: Int64 = 0
                try db.prepare("PRAGMA user_version").forEachRow { row in
                    current = row.int(0)
                    return false
                }
                if current == Self.format { return }
                for table in Self.tables { try db.execute("DROP TABLE IF EXISTS \(table)") }
                try db.execute("""
                    CREATE TABLE state(id INTEGER PRIMARY KEY CHECK (id = 1), epoch TEXT NOT NULL, applied INTEGER NOT NULL,
                                       time INTEGER NOT NULL, device TEXT NOT NULL, checksum INTEGER);
                    CREATE TABLE records(name TEXT PRIMARY KEY, type TEXT NOT NULL, seq INTEGER NOT NULL) WITHOUT ROWID;
                    CREATE TABLE fields(name TEXT NOT NULL, key TEXT NOT NULL, value NOT NULL,
                                        PRIMARY KEY (name, key, value)) WITHOUT ROWID;
                    CREATE TABLE refs(name TEXT NOT NULL, target TEXT NOT NULL);
                    PRAGMA user_version = \(Self.format);
                    """)
                try db.execute(Self.tokenTables)
                for (_, create) in Self.secondaryIndexes { try db.execute(create) }
            }
        }
    }

    // MARK: State

    /// How far the index holds the zone; nil for an index that holds nothing yet.
    func state() throws(CKError) -> State? {
        try locked { () throws(CKError) in try readState() }
    }

    /// The row of `state`, or of `tokens_state` or `pairs_state` (a table that must be there;
    /// their states have no checksum). Lock held.
    private func readState(from table: String = "state") throws(CKError) -> State? {
        var state: State?
        let withChecksum = table == "state" ? try stateChecksumStatement("SELECT epoch, applied, time, device, checksum FROM state WHERE id = 1") : nil
        let select: SQLiteDatabase.Statement
        if let withChecksum { select = withChecksum } else { select = try statement("SELECT epoch, applied, time, device FROM \(table) WHERE id = 1") }
        try select.forEachRow { row in
            var checksum: UInt32?
            if withChecksum != nil, case .int(let value) = row.value(4) { checksum = UInt32(truncatingIfNeeded: value) }
            state = State(epoch: row.text(0), applied: row.int(1), time: row.int(2), device: row.text(3), checksum: checksum)
            return false
        }
        return state
    }

    /// Writes the row of `state`, or of `tokens_state` or `pairs_state`. Lock held, in a
    /// write transaction.
    private func writeState(_ state: State, to table: String = "state") throws(CKError) {
        guard table == "state" else {
            try statement("INSERT OR REPLACE INTO \(table)(id, epoch, applied, time, device) VALUES (1, ?, ?, ?, ?)")
                .run([.text(state.epoch), .int(state.applied), .int(state.time), .text(state.device)])
            return
        }
        let sql = "INSERT OR REPLACE INTO state(id, epoch, applied, time, device, checksum) VALUES (1, ?, ?, ?, ?, ?)"
        if try stateChecksumStatement(sql) == nil {
            try db.execute("ALTER TABLE state ADD COLUMN checksum INTEGER")
        }
        try statement(sql).run([.text(state.epoch), .int(state.applied), .int(state.time), .text(state.device),
                                state.checksum.map { .int(Int64($0)) } ?? .null])
    }

    /// `sql`, which names `state.checksum`, prepared; nil when `state` has no such column (an
    /// older ckfs made it: the first state written adds it). Cheaper than asking
    /// `pragma_table_info` at every cold start. The statement that fails is not kept, so a
    /// column another process added is seen at the next use. Lock held.
    private func stateChecksumStatement(_ sql: String) throws(CKError) -> SQLiteDatabase.Statement? {
        do {
            return try statement(sql)
        } catch where SQLiteDatabase.isStatementError(error) {
            return nil
        }
    }

    /// Runs `body` in a write transaction with the state as it is inside it; the state `body`
    /// returns is written before the commit. `waitingMilliseconds` bounds the wait for another
    /// process's transaction (then `body` does not run and this throws a busy error). With
    /// `skipIfInUse`, nothing runs (and this returns false) while another thread of this
    /// process uses the index.
    @discardableResult
    func update(waitingMilliseconds: Int32, skipIfInUse: Bool = false,
                _ body: (State?, Writer) throws(CKError) -> State?) throws(CKError) -> Bool {
        if skipIfInUse {
            guard lock.try() else { return false }
        } else {
            lock.lock()
        }
        defer { lock.unlock() }
        db.setBusyTimeout(milliseconds: waitingMilliseconds)
        defer { db.setBusyTimeout(milliseconds: 10_000) }
        recordsWritten = 0
        try db.writeTransaction { () throws(CKError) in
            let before = try readState()
            maintainedPairs = try currentPairs(at: before)
            defer { maintainedPairs = [:] }
            guard let after = try body(before, Writer(index: self)) else { return }
            // Compared with the state as `body` left it: a rebuild removed the row.
            guard after != (try readState()) else { return }
            try writeState(after)
            if !maintainedPairs.isEmpty { try writeState(after, to: "pairs_state") }
        }
        // After a large update (a rebuild), the WAL holds a copy of most of the file: move
        // it into the file now and empty it, rather than leave it to readers to look up.
        emptyWAL(always: recordsWritten > Self.checkpointAfter)
        return true
    }

    /// Moves the WAL into the file and empties it, when it holds more than ``walLimit`` bytes
    /// or `always`. Lock held, after a commit; waits for other processes' readers no longer
    /// than the busy timeout set, and leaves the WAL to a later commit when they hold it.
    ///
    /// A process that opens the index while no other has it open reads the whole WAL back
    /// first (SQLite rebuilds its shared-memory index of it). A process that ends without
    /// closing its connection, as a CLI command does, leaves that index unknown to the next,
    /// which then finds no page of the WAL in the file, and appends: SQLite's own checkpoints
    /// (at 1,000 pages) never let it start over, and one-shot writers would grow it without
    /// bound, read back whole by every cold question (docs/Performance.md, row 10).
    private func emptyWAL(always: Bool) {
        if !always {
            guard case .success(let wal?) = Syscall.stat(path + "-wal"), wal.size > Self.walLimit else { return }
            // A save does not wait for another process's reader: the next commit tries again.
            db.setBusyTimeout(milliseconds: 0)
        }
        try? db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    }

    /// Changes to the index, inside ``update(waitingMilliseconds:_:)``.
    struct Writer {
        fileprivate let index: ZoneIndexFile

        /// Reads inside the same transaction.
        var reader: Reader { Reader(index: index) }

        /// Empties the index and drops its secondary indexes, for a rebuild that puts every
        /// record in name order and then calls ``finishRebuild()``.
        func removeAll() throws(CKError) {
            for table in ["state", "records", "fields", "refs"] { try index.db.execute("DELETE FROM \(table)") }
            // The tokens are made again when next asked for, and the pairs' rows when a query
            // next needs them.
            try index.db.execute("DROP TABLE IF EXISTS tokens_state")
            try forgetPairRows()
            for (name, _) in ZoneIndexFile.secondaryIndexes { try index.db.execute("DROP INDEX IF EXISTS \(name)") }
            // Room for the rows of a large rebuild in memory before they reach the WAL. SQLite's
            // sorter for the secondary indexes takes as much again; a larger cache made no
            // rebuild faster, only the mount daemon that makes one larger.
            try index.db.execute("PRAGMA cache_size = -16384")
        }

        /// Makes the secondary indexes again after a rebuild's rows are in.
        func finishRebuild() throws(CKError) {
            for (_, create) in ZoneIndexFile.secondaryIndexes { try index.db.execute(create) }
            try index.db.execute("PRAGMA cache_size = -2000")
        }

        /// How many of the pairs' rows differ from what the records' rows say (missing, or
        /// there without a record that gives them), when the pairs are current: `fsck`'s look.
        func pairRowsDiffering() throws(CKError) -> Int {
            guard !index.maintainedPairs.isEmpty else { return 0 }
            let derived = """
                SELECT p.type, p.key, k.value, p.sort, s.value, r.name FROM pair_keys p JOIN records r ON r.type = p.type
                JOIN fields k ON k.name = r.name AND k.key = p.key JOIN fields s ON s.name = r.name AND s.key = p.sort
                """
            let held = "SELECT type, key, keyValue, sort, value, name FROM pairs"
            var n = 0
            try index.statement("SELECT (SELECT count(*) FROM (\(held) EXCEPT \(derived))) + (SELECT count(*) FROM (\(derived) EXCEPT \(held)))")
                .forEachRow { row in
                    n = Int(row.int(0))
                    return false
                }
            return n
        }

        /// Empties the pairs' rows, to be made again when a query next needs them; the pairs
        /// kept stay kept.
        func forgetPairRows() throws(CKError) {
            try index.db.execute("DROP TABLE IF EXISTS pairs_state")
            try index.db.execute("DROP TABLE IF EXISTS pairs")
            index.maintainedPairs = [:]
        }

        /// Takes in one log entry: each change newer than what the index holds of its record.
        func apply(_ entry: LogEntry) throws(CKError) {
            for d in entry.deleted where try index.seq(of: d.recordName).map({ $0 < entry.seq }) ?? false {
                try index.remove(d.recordName)
            }
            for r in entry.saved { try put(r, seq: entry.seq) }
        }

        // MARK: Client change tokens

        /// Makes the tokens' tables when the index has none yet.
        func makeTokenTables() throws(CKError) { try index.db.execute(ZoneIndexFile.tokenTables) }

        /// Up to which entry the tokens are all there; nil when not known.
        func tokensState() throws(CKError) -> State? { try index.readState(from: "tokens_state") }

        func setTokensState(_ state: State) throws(CKError) { try index.writeState(state, to: "tokens_state") }

        /// Removes the tokens of entries after `seq` (every token when nil).
        func removeTokens(after seq: Int64?) throws(CKError) {
            try index.statement("DELETE FROM tokens WHERE seq > ?").run([.int(seq ?? Int64.min)])
        }

        /// Keeps the client change token entry `seq` gave.
        func putClientChangeToken(_ token: Data, seq: Int64) throws(CKError) {
            try index.statement("INSERT OR REPLACE INTO tokens(seq, token) VALUES (?, ?)").run([.int(seq), .text(token.base64EncodedString())])
        }

        /// Keeps `record` as of change `seq`, unless the index holds a newer version.
        func put(_ record: Record, seq: Int64) throws(CKError) {
            let name = record.recordID.recordName
            if let held = try index.seq(of: name) {
                guard held < seq else { return }
                try index.remove(name)
            }
            try index.statement("INSERT INTO records(name, type, seq) VALUES (?, ?, ?)").run([.text(name), .text(record.recordType), .int(seq)])
            index.recordsWritten += 1
            // A list holding a value twice keeps it once: a record matches when any element does.
            let insertField = try index.statement("INSERT OR IGNORE INTO fields(name, key, value) VALUES (?, ?, ?)")
            let values = ZoneIndexFile.indexedValues(of: record)
            for (key, value) in values {
                try insertField.run([.text(name), .text(key), value])
            }
            if let pairs = index.maintainedPairs[record.recordType] {
                let insertPair = try index.statement("INSERT OR IGNORE INTO pairs(type, key, keyValue, sort, value, name) VALUES (?, ?, ?, ?, ?, ?)")
                for pair in pairs {
                    for (k, keyValue) in values where k == pair.key {
                        for (s, value) in values where s == pair.sort {
                            try insertPair.run([.text(pair.type), .text(pair.key), keyValue, .text(pair.sort), value, .text(name)])
                        }
                    }
                }
            }
            let insertRef = try index.statement("INSERT INTO refs(name, target) VALUES (?, ?)")
            for target in Set(record.deleteSelfReferences.map(\.target)) {
                try insertRef.run([.text(name), .text(target)])
            }
        }
    }

    private func seq(of name: String) throws(CKError) -> Int64? {
        var seq: Int64?
        try statement("SELECT seq FROM records WHERE name = ?").forEachRow([.text(name)]) { row in
            seq = row.int(0)
            return false
        }
        return seq
    }

    private func remove(_ name: String) throws(CKError) {
        recordsWritten += 1
        try statement("DELETE FROM records WHERE name = ?").run([.text(name)])
        try statement("DELETE FROM fields WHERE name = ?").run([.text(name)])
        try statement("DELETE FROM refs WHERE name = ?").run([.text(name)])
        if !maintainedPairs.isEmpty { try statement("DELETE FROM pairs WHERE name = ?").run([.text(name)]) }
    }

    // MARK: Pairs

    /// Whether the index has a table of this name. Lock held.
    private func hasTable(_ name: String) throws(CKError) -> Bool {
        var found = false
        try statement("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?").forEachRow([.text(name)]) { _ in
            found = true
            return false
        }
        return found
    }

    /// The pairs kept, by record type, when their rows hold the index as of `state`; none
    /// otherwise. Lock held, in a transaction.
    private func currentPairs(at state: State?) throws(CKError) -> [String: [Pair]] {
        guard let state, try hasTable("pairs_state"), try readState(from: "pairs_state") == state else { return [:] }
        return Dictionary(grouping: try pairKeys(), by: \.type)
    }

    /// Every pair kept (`pair_keys`, a table that must be there). Lock held.
    private func pairKeys() throws(CKError) -> Set<Pair> {
        var out: Set<Pair> = []
        try statement("SELECT type, key, sort FROM pair_keys").forEachRow { row in
            out.insert(Pair(type: row.text(0), key: row.text(1), sort: row.text(2)))
            return true
        }
        return out
    }

    /// Keeps `pair` from now on, with its rows for every record the index holds, and brings the
    /// other pairs' rows up to the index's state when an update left them behind. When the
    /// index keeps ``pairLimit`` pairs already, the one used longest ago makes room if it was
    /// last used before `idleBefore` (milliseconds since 1970, as `now`); it is dropped with its
    /// rows. Not kept when none is idle. `waitingMilliseconds` bounds the wait for another
    /// process's transaction.
    func keepPair(_ pair: Pair, now: Int64, idleBefore: Int64, waitingMilliseconds: Int32) throws(CKError) -> (kept: Bool, dropped: Pair?) {
        try locked { () throws(CKError) -> (kept: Bool, dropped: Pair?) in
            db.setBusyTimeout(milliseconds: waitingMilliseconds)
            defer { db.setBusyTimeout(milliseconds: 10_000) }
            var (kept, filled, dropped) = (false, false, Pair?.none)
            try db.writeTransaction { () throws(CKError) in
                guard let state = try readState() else { throw CKError(.internalError, "the index holds no record yet") }
                try db.execute(Self.pairTables)
                try addPairUseIfMissing()
                var pairs = try pairKeys()
                if !pairs.contains(pair) && pairs.count >= Self.pairLimit {
                    guard let idle = try pairUsedLongestAgo(before: idleBefore) else { return }
                    let key: [SQLiteDatabase.Value] = [.text(idle.type), .text(idle.key), .text(idle.sort)]
                    try statement("DELETE FROM pairs WHERE type = ? AND key = ? AND sort = ?").run(key)
                    try statement("DELETE FROM pair_keys WHERE type = ? AND key = ? AND sort = ?").run(key)
                    pairs.remove(idle)
                    dropped = idle
                }
                let current = try readState(from: "pairs_state") == state
                if !current { try db.execute("DELETE FROM pairs") }
                var fill = current ? [] : Array(pairs)
                if !pairs.contains(pair) {
                    try statement("INSERT INTO pair_keys(type, key, sort, used) VALUES (?, ?, ?, ?)")
                        .run([.text(pair.type), .text(pair.key), .text(pair.sort), .int(now)])
                    fill.append(pair)
                }
                for p in fill {
                    try statement("""
                        INSERT OR IGNORE INTO pairs(type, key, keyValue, sort, value, name)
                        SELECT r.type, k.key, k.value, s.key, s.value, r.name FROM records r
                        JOIN fields k ON k.name = r.name AND k.key = ? JOIN fields s ON s.name = r.name AND s.key = ?
                        WHERE r.type = ?
                        """).run([.text(p.key), .text(p.sort), .text(p.type)])
                }
                try writeState(state, to: "pairs_state")
                kept = true
                filled = !fill.isEmpty
            }
            // Rows for every record of the type went through the WAL: into the file now, as
            // after a large update.
            emptyWAL(always: filled || dropped != nil)
            return (kept, dropped)
        }
    }

    /// Notes that a query used `pair` at `now` (milliseconds since 1970), for
    /// ``keepPair(_:now:idleBefore:waitingMilliseconds:)`` to choose which pair makes room.
    /// Does not wait for another process's transaction: the use is noted at a later query then.
    func notePairUse(_ pair: Pair, now: Int64) throws(CKError) {
        try locked { () throws(CKError) in
            db.setBusyTimeout(milliseconds: 0)
            defer { db.setBusyTimeout(milliseconds: 10_000) }
            try db.writeTransaction { () throws(CKError) in
                try addPairUseIfMissing()
                try statement("UPDATE pair_keys SET used = ? WHERE type = ? AND key = ? AND sort = ?")
                    .run([.int(now), .text(pair.type), .text(pair.key), .text(pair.sort)])
            }
            emptyWAL(always: false)
        }
    }

    /// Adds `pair_keys.used` to a table an older ckfs made without it (its pairs count as never
    /// used). Lock held, in a write transaction.
    private func addPairUseIfMissing() throws(CKError) {
        guard try !hasPairUse() else { return }
        try db.execute("ALTER TABLE pair_keys ADD COLUMN used INTEGER NOT NULL DEFAULT 0")
    }

    /// Whether `pair_keys` has its `used` column. Lock held.
    private func hasPairUse() throws(CKError) -> Bool {
        var found = false
        try statement("SELECT 1 FROM pragma_table_info('pair_keys') WHERE name = 'used'").forEachRow { _ in
            found = true
            return false
        }
        return found
    }

    /// The pair last used longest ago, if that was before `before`. Lock held.
    private func pairUsedLongestAgo(before: Int64) throws(CKError) -> Pair? {
        var found: Pair?
        try statement("SELECT type, key, sort FROM pair_keys WHERE used < ? ORDER BY used, type, key, sort LIMIT 1").forEachRow([.int(before)]) { row in
            found = Pair(type: row.text(0), key: row.text(1), sort: row.text(2))
            return false
        }
        return found
    }

    private func locked<T>(_ body: () throws(CKError) -> T) throws(CKError) -> T {
        lock.lock()
        defer { lock.unlock() }
        return try body()
    }

    /// A statement prepared once per connection. Lock held.
    private func statement(_ sql: String) throws(CKError) -> SQLiteDatabase.Statement {
        if let s = statements[sql] { return s }
        let s = try db.prepare(sql)
        statements[sql] = s
        return s
    }

    // MARK: Values

    /// The values a record is found by: its fields' (a list's each element) but encrypted
    /// ones, which no query reads, and the system fields queries name.
    static func indexedValues(of record: Record) -> [(String, SQLiteDatabase.Value)] {
        var out: [(String, SQLiteDatabase.Value)] = []
        for (key, value) in record.fields where !record.encryptedKeys.contains(key) {
            if case .list(_, let items) = value {
                for item in items { if let v = indexValue(item) { out.append((key, v)) } }
            } else if let v = indexValue(value) {
                out.append((key, v))
            }
        }
        if let c = record.created {
            out.append(("creationDate", indexValue(of: Date(millisecondsSince1970: c.timestamp))))
            out.append(("creatorUserRecordID", .text(c.userRecordName)))
        }
        if let m = record.modified {
            out.append(("modificationDate", indexValue(of: Date(millisecondsSince1970: m.timestamp))))
            out.append(("lastModifiedUserRecordID", .text(m.userRecordName)))
        }
        return out
    }

    /// A date as the index keeps it: seconds since 2001, the `Date`'s own value, so compared
    /// whole; a query's date constant is kept the same way.
    static func indexValue(of date: Date) -> SQLiteDatabase.Value { .double(date.timeIntervalSinceReferenceDate) }

    /// A field value as the index keeps it; nil for kinds it does not keep.
    static func indexValue(_ value: FieldValue) -> SQLiteDatabase.Value? {
        switch value {
        case .string(let s): .text(s.canonicallyComposed)
        case .int64(let n): .int(n)
        case .timestamp(let date): indexValue(of: date)
        case .double(let d): .double(d)
        case .reference(let r): .text(r.recordName.canonicallyComposed)
        case .bytes, .location, .asset, .list: nil
        }
    }

    // MARK: Reading

    /// Runs `body` in one read transaction: what it reads is one state of the index.
    func read<T>(_ body: (Reader) throws(CKError) -> T) throws(CKError) -> T {
        try locked { () throws(CKError) in
            try db.readTransaction { () throws(CKError) in try body(Reader(index: self)) }
        }
    }

    /// Questions the index answers, inside ``read(_:)``.
    struct Reader {
        fileprivate let index: ZoneIndexFile

        /// Record names after `after` (all when nil), in order, at most `limit`.
        func names(after: String?, limit: Int) throws(CKError) -> [String] {
            try index.statement("SELECT name FROM records WHERE name > ? ORDER BY name LIMIT ?").texts([.text(after ?? ""), .int(Int64(limit))])
        }

        /// Names of the records of `type`, in order.
        func names(ofType type: String) throws(CKError) -> [String] {
            try index.statement("SELECT name FROM records WHERE type = ? ORDER BY name").texts([.text(type)])
        }

        /// Whether any record has type `type`.
        func hasRecords(ofType type: String) throws(CKError) -> Bool {
            var found = false
            try index.statement("SELECT 1 FROM records WHERE type = ? LIMIT 1").forEachRow([.text(type)]) { _ in
                found = true
                return false
            }
            return found
        }

        /// The record types that have records, in order: one seek in `records_by_type` per
        /// type, not a walk of every record.
        func recordTypes() throws(CKError) -> [String] {
            var out: [String] = []
            let next = try index.statement("SELECT type FROM records WHERE type > ? ORDER BY type LIMIT 1")
            while true {
                var found: String?
                try next.forEachRow([.text(out.last ?? "")]) { row in
                    found = row.text(0)
                    return false
                }
                guard let found else { return out }
                out.append(found)
            }
        }

        /// Up to which entry the tokens are all there; nil when not known (or the index has no
        /// tokens' tables yet).
        func tokensState() throws(CKError) -> State? {
            var exists = false
            try index.statement("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'tokens_state'").forEachRow { _ in
                exists = true
                return false
            }
            return exists ? try index.readState(from: "tokens_state") : nil
        }

        /// The client change token of the last entry up to `seq` that gave one; nil when none
        /// the index holds did.
        func clientChangeToken(upTo seq: Int64) throws(CKError) -> Data? {
            try index.statement("SELECT token FROM tokens WHERE seq <= ? ORDER BY seq DESC LIMIT 1").texts([.int(seq)]).first
                .flatMap { Data(base64Encoded: $0) }
        }

        /// Whether the index keeps `pair` and its rows hold the index's state.
        func keeps(_ pair: Pair) throws(CKError) -> Bool {
            try index.currentPairs(at: try index.readState())[pair.type]?.contains(pair) ?? false
        }

        /// When a query last used `pair` (milliseconds since 1970; 0 when no use was noted), if
        /// the index keeps it and its rows hold the index's state; nil otherwise.
        func lastUse(of pair: Pair) throws(CKError) -> Int64? {
            guard try keeps(pair) else { return nil }
            guard try index.hasPairUse() else { return 0 }
            var used: Int64 = 0
            try index.statement("SELECT used FROM pair_keys WHERE type = ? AND key = ? AND sort = ?")
                .forEachRow([.text(pair.type), .text(pair.key), .text(pair.sort)]) { row in
                    used = row.int(0)
                    return false
                }
            return used
        }

        /// How many rows of `key` in records of `type` have `value`, counting no further than
        /// `limit`, and the work that took (as a walk's, ``selectInSortOrder(type:where:sort:from:pair:limit:_:)``).
        /// Only `type`'s: another type's records with the same field and value would make a
        /// pair whose walk finds none of them. `CROSS JOIN` keeps SQLite walking the value's
        /// rows and looking up each one's type: the index has no statistics, and SQLite would
        /// take the other order, probing every record of the type for the value, which is slow
        /// in a large zone for a value no record has.
        func count(type: String, key: String, value: SQLiteDatabase.Value, upTo limit: Int) throws(CKError) -> (matches: Int, work: Int) {
            var n = 0
            let statement = try index.statement("""
                SELECT count(*) FROM (SELECT 1 FROM fields f CROSS JOIN records r ON r.name = f.name
                WHERE f.key = ? AND f.value = ? AND r.type = ? LIMIT ?)
                """)
            try statement.forEachRow([.text(key), value, .text(type), .int(Int64(limit))]) { row in
                n = Int(row.int(0))
                return false
            }
            return (n, statement.takeWork())
        }

        /// Names of the records with a `deleteSelf` reference to `target`.
        func referrers(of target: String) throws(CKError) -> [String] {
            try index.statement("SELECT name FROM refs WHERE target = ? ORDER BY name").texts([.text(target)])
        }

        /// Everything the index holds of each record whose name is `first` or after and before
        /// `end` (in SQLite's order of text: its UTF-8 bytes; no end when nil), by name, for
        /// `fsck` to compare with the records (``ZoneIndexFile/Entry/init(_:seq:)``).
        func entries(from first: String, below end: String?) throws(CKError) -> [String: Entry] {
            var out: [String: Entry] = [:]
            // Two forms, so that SQLite seeks to both ends of the range in each table's order.
            let range = end == nil ? "name >= ?" : "name >= ? AND name < ?"
            let bounds: [SQLiteDatabase.Value] = [.text(first)] + (end.map { [.text($0)] } ?? [])
            try index.statement("SELECT name, type, seq FROM records WHERE \(range)").forEachRow(bounds) { row in
                out[row.text(0)] = Entry(type: row.text(1), seq: row.int(2), values: [], targets: [])
                return true
            }
            try index.statement("SELECT name, key, value FROM fields WHERE \(range)").forEachRow(bounds) { row in
                out[row.text(0), default: Entry(type: "", seq: -1, values: [], targets: [])].values.insert(Entry.describe(row.text(1), row.value(2)))
                return true
            }
            try index.statement("SELECT name, target FROM refs WHERE \(range)").forEachRow(bounds) { row in
                out[row.text(0), default: Entry(type: "", seq: -1, values: [], targets: [])].targets.insert(row.text(1))
                return true
            }
            return out
        }

        /// The records of `type` that meet every condition, in the order of `sort` (values a
        /// record lacks last, then by name), each with its sort values: `body` is called for
        /// each until it returns false. A superset when a condition is looser in SQL than in
        /// the query (the caller checks each record it reads).
        func select(type: String, where conditions: [Condition], sort: [Sort],
                    _ body: (_ name: String, _ values: [SQLiteDatabase.Value]) throws(CKError) -> Bool) throws(CKError) {
            let columns = Self.sortColumns(sort, firstFromIndex: false)
            var sql = columns.sql + " FROM records r" + columns.joins + " WHERE r.type = ?"
            var args = columns.args
            args.append(.text(type))
            for c in conditions {
                let (clause, values) = c.sql(correlated: false)
                sql += " AND " + clause
                args += values
            }
            sql += " ORDER BY " + columns.order + "r.name"
            try index.statement(sql).forEachRow(args) { (row) throws(CKError) -> Bool in
                let values = (0..<sort.count).map { row.value(Int32($0 + 1)) }
                return try body(row.text(0), values)
            }
        }

        /// The select list, joins, order and their arguments for `sort`: each key's value from
        /// a join on `fields` (values a record lacks last), or, with `firstFromIndex`, the first
        /// key's from `fields s0`, which the query walks in order. Each term of the order ends in
        /// ", ", before the caller's last term: the standard library's `joined(separator:)` is
        /// generic code whose first call in a process searches every conformance record in the
        /// binary (docs/Performance.md, row 10).
        private static func sortColumns(_ sort: [Sort], firstFromIndex: Bool)
            -> (sql: String, joins: String, order: String, args: [SQLiteDatabase.Value]) {
            var sql = "SELECT r.name"
            var joins = ""
            var order = ""
            var args: [SQLiteDatabase.Value] = []
            for (i, s) in sort.enumerated() {
                let direction = s.ascending ? "" : " DESC"
                if s.key == Sort.recordName {
                    sql += ", r.name"
                    order += "r.name" + direction + ", "
                } else if i == 0 && firstFromIndex {
                    sql += ", s0.value"
                    order += "s0.value" + direction + ", "
                } else {
                    sql += ", s\(i).value"
                    joins += " LEFT JOIN fields s\(i) ON s\(i).name = r.name AND s\(i).key = ?"
                    args.append(.text(s.key))
                    order += "s\(i).value IS NULL, s\(i).value" + direction + ", "
                }
            }
            return (sql, joins, order, args)
        }

        /// As ``select(type:where:sort:_:)``, for the records that have a value for the first
        /// sort key only, walked in that key's order from the index (from `from`, included,
        /// when given) and each tested against the conditions: at most `limit` rows of the
        /// index are walked (with the ones that tie with the last), and fewer come out when
        /// records fail the conditions. When most records match, a page costs the rows walked
        /// to fill it, not a sort of every match; when few do, the walk stops at `limit` rows
        /// instead of going on through the whole zone to find them. Returns the work SQLite
        /// did (``SQLiteDatabase/Statement/takeWork()``).
        ///
        /// With `pair` (a pair index the index keeps, and the value its key must have), the
        /// walk is of that pair's rows: only the records with that value.
        func selectInSortOrder(type: String, where conditions: [Condition], sort: [Sort], from: SQLiteDatabase.Value?,
                               pair: (Pair, SQLiteDatabase.Value)? = nil,
                               limit: Int, _ body: (_ name: String, _ values: [SQLiteDatabase.Value]) throws(CKError) -> Bool) throws(CKError) -> Int {
            guard let first = sort.first, first.key != Sort.recordName else { return 0 }
            let columns = Self.sortColumns(sort, firstFromIndex: true)
            // The rows walked: the first key's values, or the pair's for one value.
            var (table, filter, filterArgs): (String, String, [SQLiteDatabase.Value])
            if case let (pair, keyValue)? = pair {
                (table, filter) = ("pairs", "s0.type = ? AND s0.key = ? AND s0.keyValue = ? AND s0.sort = ?")
                filterArgs = [.text(pair.type), .text(pair.key), keyValue, .text(pair.sort)]
            } else {
                (table, filter, filterArgs) = ("fields", "s0.key = ?", [.text(first.key)])
            }
            if let from {
                filter += " AND s0.value " + (first.ascending ? ">= ?" : "<= ?")
                filterArgs.append(from)
            }
            // The value `limit` rows into the walk bounds it: SQLite tests the conditions row by
            // row in sort order and, without the bound, walks on to the zone's end looking for
            // matches that are not there. The bound takes in every row of its value, so the
            // records that tie on the first key are all there for the other keys to order.
            let direction = first.ascending ? "" : " DESC"
            let boundStatement = try index.statement("SELECT s0.value FROM \(table) s0 WHERE \(filter) ORDER BY s0.value\(direction) LIMIT 1 OFFSET ?")
            var bound: SQLiteDatabase.Value?
            try boundStatement.forEachRow(filterArgs + [.int(Int64(max(limit - 1, 0)))]) { row in
                bound = row.value(0)
                return false
            }
            var work = boundStatement.takeWork()
            var sql = columns.sql + " FROM \(table) s0 JOIN records r ON r.name = s0.name" + columns.joins + " WHERE " + filter
            var args = columns.args + filterArgs
            if pair == nil {
                sql += " AND r.type = ?"
                args.append(.text(type))
            }
            if let bound {
                sql += " AND s0.value " + (first.ascending ? "<= ?" : ">= ?")
                args.append(bound)
            }
            for c in conditions {
                let (clause, values) = c.sql(correlated: true)
                sql += " AND " + clause
                args += values
            }
            sql += " ORDER BY " + columns.order + (pair == nil ? "r.name" : "s0.name") + " LIMIT ?"
            args.append(.int(Int64(limit)))
            let walk = try index.statement(sql)
            try walk.forEachRow(args) { (row) throws(CKError) -> Bool in
                let values = (0..<sort.count).map { row.value(Int32($0 + 1)) }
                return try body(row.text(0), values)
            }
            work += walk.takeWork()
            return work
        }
    }

    /// What the index holds of one record.
    struct Entry: Equatable {
        var type: String
        var seq: Int64
        var values: Set<String>
        var targets: Set<String>

        /// What the index should hold of `record`, saved at change `seq`.
        init(_ record: Record, seq: Int64) {
            type = record.recordType
            self.seq = seq
            values = Set(ZoneIndexFile.indexedValues(of: record).map { Self.describe($0.0, $0.1) })
            targets = Set(record.deleteSelfReferences.map(\.target))
        }

        init(type: String, seq: Int64, values: Set<String>, targets: Set<String>) {
            self.type = type
            self.seq = seq
            self.values = values
            self.targets = targets
        }

        /// One value of a record as a comparable string, its type told apart (`5` the number
        /// from `5` the text). Written out case by case: interpolating the enum reflects it
        /// (`Mirror`), which took most of `fsck`'s time at 100,000 records.
        static func describe(_ key: String, _ value: SQLiteDatabase.Value) -> String {
            switch value {
            case .int(let i): return key + "=i:" + String(i)
            case .double(let d): return key + "=d:" + String(d)
            case .text(let t): return key + "=t:" + t
            case .null: return key + "=null"
            }
        }
    }

    /// A condition the index can test: on the record name, or on a key's values (a record
    /// matches when one of its values for the key does).
    struct Condition {
        enum Test {
            case compare(String, SQLiteDatabase.Value)
            case between(SQLiteDatabase.Value, SQLiteDatabase.Value)
            case oneOf([SQLiteDatabase.Value])
            case prefix(String)
        }

        var key: String
        var test: Test

        /// The condition in SQL on `records r`: as a set of names to start from (`IN`), or
        /// tested record by record (`EXISTS`) when the rows come in the order of a sort key.
        func sql(correlated: Bool) -> (String, [SQLiteDatabase.Value]) {
            let (test, values) = Self.sql(test, column: key == Sort.recordName ? "r.name" : "f.value")
            if key == Sort.recordName { return (test, values) }
            if correlated { return ("EXISTS (SELECT 1 FROM fields f WHERE f.name = r.name AND f.key = ? AND \(test))", [.text(key)] + values) }
            return ("r.name IN (SELECT f.name FROM fields f WHERE f.key = ? AND \(test))", [.text(key)] + values)
        }

        private static func sql(_ test: Test, column: String) -> (String, [SQLiteDatabase.Value]) {
            switch test {
            case .compare(let op, let v): return ("\(column) \(op) ?", [v])
            case .between(let low, let high): return ("\(column) BETWEEN ? AND ?", [low, high])
            case .oneOf(let values): return ("\(column) IN (\(values.map { _ in "?" }.joined(separator: ", ")))", values)
            case .prefix(let p):
                // GLOB with the pattern's own characters escaped; SQLite turns it into a range
                // of its index.
                var pattern = ""
                for c in p { pattern += "*?[".contains(c) ? "[\(c)]" : String(c) }
                return ("\(column) GLOB ?", [.text(pattern + "*")])
            }
        }
    }

    /// A sort key: a field, or ``recordName``.
    struct Sort {
        static let recordName = "\u{0}name"
        var key: String
        var ascending: Bool
    }
}
