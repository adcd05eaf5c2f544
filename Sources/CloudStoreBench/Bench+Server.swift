import CloudStore
import CloudStoreServerCore
import Foundation

// Row 9: `ckfs serve` under load. wrk (a load client in C, from Debian) sends lookups,
// queries and saves over 8 connections to the server, to the same framework answering a fixed
// body (the HTTP floor: `ckfs debug http-floor`), and to moto's DynamoDB server (PyPI), the
// local cloud database a user might pick instead, holding the same records; the engine's own
// cost of each operation, in this process, is the fourth baseline.
extension Bench {
    /// A server started for the rows, stopped with SIGTERM.
    final class Server {
        let pid: Posix.pid_t
        let url: String
        /// The file that holds the server's standard error.
        let errors: String?
        /// The exit status, once `ended()` has found (and reaped) the server ended.
        private var status: Int32?

        init(pid: Posix.pid_t, url: String, errors: String? = nil) {
            self.pid = pid
            self.url = url
            self.errors = errors
        }

        /// Why the server is no longer there, with the end of its standard error; nil while it
        /// runs.
        func ended() -> String? {
            guard let status = status ?? Syscall.exitStatus(ifEnded: pid) else { return nil }
            self.status = status
            let text = errors.flatMap { try? String(contentsOfFile: $0, encoding: .utf8) } ?? ""
            return "the server (pid \(pid)) ended with status \(status)" + (text.isEmpty ? "" : "; " + Self.digest(text))
        }

        /// What of a server's standard error explains its end: the line Swift's backtracer
        /// starts with and its backtrace of the thread that crashed (listed in thread order,
        /// among every other thread's), else the end.
        static func digest(_ text: String) -> String {
            let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
            if let header = lines.first(where: { $0.contains("Program crashed") }) {
                let crashed = lines.drop { !($0.hasPrefix("Thread ") && $0.hasSuffix(" crashed:")) }
                return "its standard error on the crash:\n\(header)\n" + crashed.prefix(40).joined(separator: "\n")
            }
            return "the end of its standard error:\n" + text.suffix(4000)
        }

        /// SIGTERM, and SIGKILL after 5 s for a server that does not stop on it (moto's does not).
        func stop() {
            // A reaped pid may belong to another process by now.
            if status != nil { return }
            Syscall.signal(pid, Posix.SIGTERM)
            // hasExited reaps the child when it has ended, so it is true only once.
            for _ in 0..<100 {
                if Syscall.hasExited(pid) { return }
                Thread.sleep(forTimeInterval: 0.05)
            }
            Syscall.signal(pid, Posix.SIGKILL)
            _ = Syscall.waitForExit(pid)
        }
    }

    /// What wrk measured: requests a second over all connections, and the 99th percentile.
    struct Load {
        var perSecond: Double
        var p99Microseconds: Double
        /// µs a request, all connections together: 1e6 / rate.
        var microseconds: Double { 1e6 / perSecond }
    }

    /// The tools row 9 needs, or what is missing.
    static func serverRowsMissing() -> String? {
        if !commandExists("wrk") { return "wrk (apt-get install wrk)" }
        if !commandExists("moto_server") { return "moto's DynamoDB server (pip install 'moto[server]')" }
        return nil
    }

    static func commandExists(_ name: String) -> Bool { commandPath(name) != nil }

    /// Where `name` is found on the PATH.
    static func commandPath(_ name: String) -> String? {
        (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":")
            .map { "\($0)/\(name)" }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    func serverRows(executable: String) throws(CKError) -> [Row] {
        if let missing = Self.serverRowsMissing() {
            progress("row 9 needs \(missing); scripts/bootstrap --test installs it. Row 9 is left out.")
            return []
        }
        let n = sizes.serverRecords
        // Read as `ckfs serve` reads it, so the in-process rows are the engine's part of a request.
        let db = try store("serve", reading: .server)
        try fillOnly(db, count: n)
        let apiToken = try db.container.createAPIToken()
        let webToken = try db.container.signIn(userName: Self.user)
        let encoded = webToken.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? webToken
        let query = "?ckAPIToken=\(apiToken)&ckWebAuthToken=\(encoded)"
        let prefix = "/database/1/\(db.container.identifier)/development/private/"

        // In-process: the engine's cost of the same operations, one at a time.
        var rng = SplitMix(seed: 9)
        let zone = db.zoneID(ZoneID.defaultZoneName)
        let lookups = 20_000, queries = 2_000, saves = sizes.growthSaves
        let rq = RecordQuery(recordType: "Item", predicate: .compare("kind", .equal, .string("k3")), sortDescriptors: [QuerySortDescriptor(key: "created", ascending: false)])
        // The first query makes the zone's index: done before the clock, as the server's is.
        _ = try db.query(rq, limit: 5)
        let lookupIn = try time { () throws(CKError) in
            for _ in 0..<lookups { _ = try db.fetch([RecordID(recordName: "item-\(Int(rng.next() % UInt64(n)))", zoneID: zone)])[0].1.get() }
        } / Double(lookups) * 1e6
        let queryIn = try time { () throws(CKError) in for _ in 0..<queries { _ = try db.query(rq, limit: 5) } } / Double(queries) * 1e6
        let saveIn = try time { () throws(CKError) in
            for _ in 0..<saves { try db.save(Self.record(Int(rng.next() % UInt64(n)), zone: zone), policy: .allKeys) }
        } / Double(saves) * 1e6

        let lookupScript = try luaScript("lookup", body: #"{"records":[{"recordName":"item-%d"}]}"#, records: n)
        let queryBody = #"{"query":{"recordType":"Item","filterBy":[{"fieldName":"kind","comparator":"EQUALS","fieldValue":{"value":"k3"}}],"sortBy":[{"fieldName":"created","ascending":false}]},"resultsLimit":5}"#
        let queryScript = try luaScript("query", body: queryBody, records: n)
        let saveScript = try luaScript("save", body: #"{"operations":[{"operationType":"forceReplace","record":{"recordType":"Item","recordName":"item-%d","fields":{"title":{"value":"Item of the benchmark, saved over HTTP"},"body":{"value":"lorem ipsum dolor sit amet lorem ipsum dolor sit amet"},"kind":{"value":"k3"},"score":{"value":7},"created":{"value":1700000000000,"type":"TIMESTAMP"}}}}]}"#, records: n)

        let serve = try start(executable, ["serve", "--port", "0", "--store", directory + "/serve", "--log-level", "warning"], name: "serve")
        var floorServer: Server?
        let sampleSize: Int
        let ours: (lookup: Load, query: Load, save: Load)
        let floor: Load
        var servePeak = 0
        do throws(CKError) {
            sampleSize = try checkedAnswer(serve.url + prefix + "records/lookup" + query, body: #"{"records":[{"recordName":"item-1"}]}"#, from: serve)
            let floorURL = try start(executable, ["debug", "http-floor", "--port", "0", "--bytes", String(sampleSize), "--log-level", "warning"], name: "floor")
            floorServer = floorURL
            // The lookup and the floor take turns, three times each, and the medians count: a
            // machine whose speed drifts (a VM's neighbours) then moves both alike.
            var lookups: [Load] = [], floors: [Load] = []
            for _ in 0..<3 {
                lookups.append(try wrk(lookupScript, serve.url + prefix + "records/lookup" + query, against: serve))
                floors.append(try wrk(lookupScript, floorURL.url + prefix + "records/lookup" + query, against: floorURL))
            }
            floor = Self.median(floors)
            // One query first, so that wrk measures queries, not the server's first look at the
            // zone (its index brought up to date).
            _ = try checkedAnswer(serve.url + prefix + "records/query" + query, body: queryBody, from: serve)
            ours = (Self.median(lookups), try wrk(queryScript, serve.url + prefix + "records/query" + query, against: serve),
                    try wrk(saveScript, serve.url + prefix + "records/modify" + query, against: serve))
            servePeak = ChildProcess.peakRSS(of: serve.pid) ?? 0
        } catch {
            serve.stop()
            floorServer?.stop()
            throw error
        }
        serve.stop()
        floorServer?.stop()

        let peer = try moto(records: n)
        // moto answers a Query by going through the table, so some answers over a large table
        // take seconds under this load: the peer's speed, not a failed request.
        let motoTimeout = 60
        let theirs: (lookup: Load, query: Load, save: Load)
        do throws(CKError) {
            theirs = (try wrk(try motoScript("GetItem", #"{"TableName":"Items","Key":{"name":{"S":"item-%d"}}}"#, records: n), peer.url, against: peer, timeout: motoTimeout),
                      try wrk(try motoScript("Query", #"{"TableName":"Items","IndexName":"kind-created","KeyConditionExpression":"kind = :k","ExpressionAttributeValues":{":k":{"S":"k3"}},"ScanIndexForward":false,"Limit":5}"#, records: n), peer.url, against: peer, timeout: motoTimeout),
                      try wrk(try motoScript("PutItem", #"{"TableName":"Items","Item":{"name":{"S":"item-%d"},"kind":{"S":"k3"},"created":{"N":"1700000000000"},"score":{"N":"7"},"title":{"S":"Item of the benchmark, saved over HTTP"},"body":{"S":"lorem ipsum dolor sit amet lorem ipsum dolor sit amet"}}}"#, records: n), peer.url, against: peer, timeout: motoTimeout))
        } catch {
            peer.stop()
            throw error
        }
        peer.stop()

        let storeKiB = try diskUsageKiB(directory + "/serve")
        let c = "8 connections, zone of \(n)"
        progress(String(format: "server: lookup %.0f/s (floor %.0f/s, moto %.0f/s), query %.0f/s (moto %.0f/s), save %.0f/s (moto %.0f/s)",
                        ours.lookup.perSecond, floor.perSecond, theirs.lookup.perSecond, ours.query.perSecond, theirs.query.perSecond,
                        ours.save.perSecond, theirs.save.perSecond))
        return [
            Row(id: "9a", name: "HTTP records/lookup, one record (\(c))", ckfs: ours.lookup.microseconds, baselineName: "the same fetch in-process", baseline: lookupIn),
            Row(id: "9b", name: "HTTP records/lookup, one record (\(c))", ckfs: ours.lookup.microseconds, baselineName: "HTTP floor: a fixed \(sampleSize)-byte answer", baseline: floor.microseconds),
            Row(id: "9c", name: "HTTP records/lookup, one record (\(c))", ckfs: ours.lookup.microseconds, baselineName: "moto DynamoDB GetItem", baseline: theirs.lookup.microseconds),
            Row(id: "9d", name: "HTTP records/lookup p99 latency", unit: "µs", ckfs: ours.lookup.p99Microseconds, baselineName: "HTTP floor p99", baseline: floor.p99Microseconds),
            Row(id: "9e", name: "HTTP records/lookup p99 latency", unit: "µs", ckfs: ours.lookup.p99Microseconds, baselineName: "moto GetItem p99", baseline: theirs.lookup.p99Microseconds),
            Row(id: "9f", name: "HTTP records/query, kind == k3 by created, 5 (\(c))", ckfs: ours.query.microseconds, baselineName: "the same query in-process", baseline: queryIn),
            Row(id: "9g", name: "HTTP records/query, kind == k3 by created, 5 (\(c))", ckfs: ours.query.microseconds, baselineName: "moto DynamoDB Query on an index", baseline: theirs.query.microseconds),
            Row(id: "9h", name: "HTTP records/query p99 latency", unit: "µs", ckfs: ours.query.p99Microseconds, baselineName: "moto Query p99", baseline: theirs.query.p99Microseconds),
            Row(id: "9i", name: "HTTP records/modify, one durable save (\(c))", ckfs: ours.save.microseconds, baselineName: "the same save in-process", baseline: saveIn),
            Row(id: "9j", name: "HTTP records/modify, one durable save (\(c))", ckfs: ours.save.microseconds, baselineName: "moto DynamoDB PutItem (in memory)", baseline: theirs.save.microseconds),
            Row(id: "9k", name: "HTTP records/modify p99 latency", unit: "µs", ckfs: ours.save.p99Microseconds, baselineName: "moto PutItem p99", baseline: theirs.save.p99Microseconds),
            Row(id: "9l", name: "peak RSS of ckfs serve after rows 9a-9k (zone of \(n))", unit: "MiB", ckfs: Double(servePeak) / 1_048_576,
                baselineName: "the store on disk (du)", baseline: storeKiB / 1024),
        ]
    }

    // MARK: Servers

    /// Starts a server that prints `listening on URL` first, and waits for that line.
    func start(_ path: String, _ args: [String], name: String) throws(CKError) -> Server {
        let out = directory + "/\(name).out", errors = directory + "/\(name).err"
        let pid = try Syscall.spawn(path, arguments: [path] + args, environment: ProcessInfo.processInfo.environment,
                                    files: .init(output: out, error: errors)).orThrow(.internalError, "cannot start \(path)")
        func failure(_ how: String) -> CKError {
            let said = [out, errors].compactMap { try? String(contentsOfFile: $0, encoding: .utf8) }.joined(separator: "\n").suffix(4000)
            return CKError(.internalError, "\(name) (\(path) \(args.joined(separator: " "))) did not start: \(how): \(said)")
        }
        for _ in 0..<300 {
            if let text = try? String(contentsOfFile: out, encoding: .utf8), let line = text.split(separator: "\n").first(where: { $0.contains("http://") }),
               let url = line.split(separator: " ").last(where: { $0.hasPrefix("http://") }) {
                return Server(pid: pid, url: String(url).trimmingCharacters(in: CharacterSet(charactersIn: "/")), errors: errors)
            }
            // Reaped here, so never signalled after: its pid may be another process's by then.
            if let status = Syscall.exitStatus(ifEnded: pid) { throw failure("it ended with status \(status)") }
            Thread.sleep(forTimeInterval: 0.05)
        }
        Syscall.signal(pid, Posix.SIGKILL)
        _ = Syscall.waitForExit(pid)
        throw failure("no `listening on` line in 15 s")
    }

    /// moto's DynamoDB server on a free port, with a table of `records` items like the store's
    /// and an index on (kind, created), as SQLite's in row 4b.
    func moto(records: Int) throws(CKError) -> Server {
        let port = try ChildProcess.shell("python3 -c 'import socket; s = socket.socket(); s.bind((\"127.0.0.1\", 0)); print(s.getsockname()[1])'",
                                          stdoutFile: directory + "/port").stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let server = try startMoto(port: port)
        let fill = """
            import json, sys, urllib.request
            url, n = sys.argv[1], int(sys.argv[2])
            def call(target, body):
                req = urllib.request.Request(url, data=json.dumps(body).encode(), headers={"X-Amz-Target": "DynamoDB_20120810." + target,
                    "Content-Type": "application/x-amz-json-1.0", "Authorization": "AWS4-HMAC-SHA256 Credential=bench/20250101/us-east-1/dynamodb/aws4_request, SignedHeaders=host, Signature=0"})
                urllib.request.urlopen(req).read()
            call("CreateTable", {"TableName": "Items", "BillingMode": "PAY_PER_REQUEST",
                "AttributeDefinitions": [{"AttributeName": a, "AttributeType": t} for a, t in (("name", "S"), ("kind", "S"), ("created", "N"))],
                "KeySchema": [{"AttributeName": "name", "KeyType": "HASH"}],
                "GlobalSecondaryIndexes": [{"IndexName": "kind-created", "Projection": {"ProjectionType": "ALL"},
                    "KeySchema": [{"AttributeName": "kind", "KeyType": "HASH"}, {"AttributeName": "created", "KeyType": "RANGE"}]}]})
            for start in range(0, n, 25):
                call("BatchWriteItem", {"RequestItems": {"Items": [{"PutRequest": {"Item": {
                    "name": {"S": "item-%d" % i}, "kind": {"S": "k%d" % (i % 10)}, "created": {"N": str(1700000000000 + i * 1000)},
                    "score": {"N": str((i * 7919) % 1000)}, "title": {"S": "Item number %d of the benchmark, a title" % i},
                    "body": {"S": "lorem ipsum dolor sit amet " * 4 + str(i)}}}} for i in range(start, min(start + 25, n))]}})
            """
        do throws(CKError) {
            let script = directory + "/moto-fill.py"
            guard FileManager.default.createFile(atPath: script, contents: Data(fill.utf8)) else { throw CKError(.internalError, "cannot write \(script)") }
            _ = try ChildProcess.shell("python3 '\(script)' '\(server.url)/' \(records)", stdoutFile: directory + "/moto-fill.out")
        } catch {
            server.stop()
            throw error
        }
        return server
    }

    private func startMoto(port: String) throws(CKError) -> Server {
        let out = directory + "/moto.out"
        let pid = try Syscall.spawn("/bin/sh", arguments: ["/bin/sh", "-c", "exec moto_server -H 127.0.0.1 -p \(port)"],
                                    environment: ProcessInfo.processInfo.environment, files: .init(output: out, appendOutput: true, error: out))
            .orThrow(.internalError, "cannot start moto_server")
        let url = "http://127.0.0.1:\(port)"
        for _ in 0..<200 {
            if (try? ChildProcess.shell("python3 -c 'import urllib.request; urllib.request.urlopen(\"\(url)/moto-api/\")'", stdoutFile: "/dev/null")) != nil {
                return Server(pid: pid, url: url)
            }
            if let status = Syscall.exitStatus(ifEnded: pid) {
                throw CKError(.internalError, "moto_server ended with status \(status): \((try? String(contentsOfFile: out, encoding: .utf8)) ?? "")")
            }
            Thread.sleep(forTimeInterval: 0.1)
        }
        Syscall.signal(pid, Posix.SIGKILL)
        _ = Syscall.waitForExit(pid)
        throw CKError(.internalError, "moto_server did not start in 20 s: \((try? String(contentsOfFile: out, encoding: .utf8)) ?? "")")
    }

    /// Sends one request with curl and checks that it and its items succeeded; returns the
    /// answer's size, for the floor's body.
    func checkedAnswer(_ url: String, body: String, from server: Server) throws(CKError) -> Int {
        let answer = try shell("curl -sS -X POST '\(url)' --data-binary '\(body)'", output: "answer", against: server)
        guard answer.contains("recordChangeTag"), !answer.contains("serverErrorCode") else {
            throw CKError(.internalError, "ckfs serve answered the bench's request to \(url) with \(answer.prefix(300))")
        }
        return answer.utf8.count
    }

    // MARK: wrk

    /// A wrk script POSTing `body` (JSON, `%d` a random record number) with ckfs's headers.
    func luaScript(_ name: String, body: String, records: Int) throws(CKError) -> String {
        try lua(name, headers: ["Content-Type": "application/json"], body: body, records: records)
    }

    /// A wrk script for one DynamoDB operation of moto's server.
    func motoScript(_ target: String, _ body: String, records: Int) throws(CKError) -> String {
        try lua("moto-" + target, headers: [
            "X-Amz-Target": "DynamoDB_20120810." + target, "Content-Type": "application/x-amz-json-1.0",
            "Authorization": "AWS4-HMAC-SHA256 Credential=bench/20250101/us-east-1/dynamodb/aws4_request, SignedHeaders=host, Signature=0",
        ], body: body, records: records)
    }

    private func lua(_ name: String, headers: [String: String], body: String, records: Int) throws(CKError) -> String {
        func quoted(_ s: String) -> String { "\"" + s.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\"" }
        var text = "wrk.method = \"POST\"\n"
        for (k, v) in headers.sorted(by: { $0.key < $1.key }) { text += "wrk.headers[\(quoted(k))] = \(quoted(v))\n" }
        text += """
            math.randomseed(9)
            request = function()
              return wrk.format(nil, nil, nil, string.format(\(quoted(body)), math.random(0, \(records - 1))))
            end

            """
        let path = directory + "/\(name).lua"
        guard FileManager.default.createFile(atPath: path, contents: Data(text.utf8)) else { throw CKError(.internalError, "cannot write \(path)") }
        return path
    }

    /// Runs wrk (2 threads, 8 connections) with `script` against `server`'s `url`, after a
    /// second of the same load that is not measured (a server's first query of a kind builds
    /// what later ones walk, as the in-process figures are warm too); fails when any answer was
    /// not a success, since a bench of errors measures nothing, and says so when the server
    /// ended under the load. An answer later than `timeout` seconds counts as failed (wrk's
    /// default is 2).
    func wrk(_ script: String, _ url: String, against server: Server, timeout: Int = 2) throws(CKError) -> Load {
        let seconds = sizes.serverSeconds
        let warm = try shell("wrk -t2 -c8 -d1s --timeout \(timeout)s -s '\(script)' '\(url)'", output: "wrk.out", against: server)
        if let ended = server.ended() { throw CKError(.internalError, "wrk against \(url), not yet measuring: \(ended)\n\(warm)") }
        let out = try shell("wrk -t2 -c8 -d\(seconds)s --timeout \(timeout)s --latency -s '\(script)' '\(url)'", output: "wrk.out", against: server)
        if let ended = server.ended() { throw CKError(.internalError, "wrk against \(url): \(ended)\n\(out)") }
        if out.contains("Non-2xx or 3xx responses") || out.contains("Socket errors") {
            throw CKError(.internalError, "wrk against \(url) saw failed requests:\n\(out)")
        }
        guard let rate = out.split(separator: "\n").first(where: { $0.hasPrefix("Requests/sec:") })?.split(separator: " ").last.flatMap({ Double($0) }),
              let p99 = out.split(separator: "\n").first(where: { $0.trimmingCharacters(in: .whitespaces).hasPrefix("99%") })
                .flatMap({ $0.split(separator: " ").last }).flatMap(Self.microseconds), rate > 0 else {
            throw CKError(.internalError, "cannot read wrk's output:\n\(out)")
        }
        return Load(perSecond: rate, p99Microseconds: p99)
    }

    /// Runs a client of `server` (wrk, curl); when it fails, the error says whether the server
    /// had ended, and how.
    private func shell(_ script: String, output: String, against server: Server) throws(CKError) -> String {
        do throws(CKError) {
            return try ChildProcess.shell(script, stdoutFile: directory + "/" + output).stdout
        } catch {
            throw CKError(.internalError, error.message + (server.ended().map { "; \($0)" } ?? "; the server is still running"))
        }
    }

    /// The run of the middle rate, with its own p99.
    static func median(_ loads: [Load]) -> Load { loads.sorted { $0.perSecond < $1.perSecond }[loads.count / 2] }

    /// wrk's `1.23ms`, `456.78us`, `1.01s` as microseconds.
    static func microseconds(_ text: Substring) -> Double? {
        for (suffix, scale) in [("us", 1.0), ("ms", 1e3), ("s", 1e6), ("m", 6e7)] where text.hasSuffix(suffix) {
            return Double(text.dropLast(suffix.count)).map { $0 * scale }
        }
        return nil
    }
}
