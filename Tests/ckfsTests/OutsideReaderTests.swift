import Foundation
import Testing
import TestSupport
@testable import CloudStore

/// Python3 with only `json` reads every file of the store and finds the documented structure.
@Suite struct OutsideReaderTests {
    static let script = #"""
import json, os, sys, urllib.parse
root = sys.argv[1]
types = {"STRING", "INT64", "DOUBLE", "BYTES", "TIMESTAMP", "LOCATION", "REFERENCE", "ASSETID"}
records = 0; entries = 0
for dirpath, dirs, files in os.walk(root):
    for f in files:
        p = os.path.join(dirpath, f)
        if f.endswith(".json"):
            doc = json.load(open(p))
        if os.path.basename(dirpath) == "records":
            assert f.endswith(".json"), p
            r = doc
            assert set(r) == {"created", "fields", "modified", "recordChangeTag", "recordName", "recordType", "zoneID"}, sorted(r)
            assert urllib.parse.unquote(f[:-5]) == r["recordName"], (f, r["recordName"])
            assert set(r["zoneID"]) == {"ownerName", "zoneName"}
            assert r["zoneID"]["zoneName"] == urllib.parse.unquote(os.path.basename(os.path.dirname(dirpath)))
            for k in ("created", "modified"):
                assert set(r[k]) == {"deviceID", "timestamp", "userRecordName"} and isinstance(r[k]["timestamp"], int)
            for key, field in r["fields"].items():
                assert set(field) == {"type", "value"}, field
                t = field["type"]
                base = t[:-5] if t.endswith("_LIST") else t
                assert base in types, t
                if t.endswith("_LIST"): assert isinstance(field["value"], list)
                if t == "INT64": assert isinstance(field["value"], int)
                if t == "DOUBLE": assert isinstance(field["value"], float)
            records += 1
        if f == "log.jsonl":
            for line in open(p):
                e = json.loads(line)
                assert set(e) == {"body", "crc"} and len(e["crc"]) == 8
                assert {"seq", "saved", "deleted", "usage"} <= set(e["body"])
                entries += 1
        if f == "zone.json":
            assert {"zoneName", "epoch", "checkpointSeq", "capabilities"} <= set(doc)
print(records, entries)
"""#

    @Test func python3ReadsEveryRecordFile() throws {
        let cli = try CLIFixture()
        cli.run(["zone", "create", "Work/Stuff"])
        let input = #"""
        [{"recordType":"Artist","recordName":"mei/chen","fields":{"name":"Mei","age":41,"score":2.5,"tags":["a","b"],
          "photo":{"type":"BYTES","value":"AAEC"},"born":{"type":"TIMESTAMP","value":1714000000000},
          "where":{"type":"LOCATION","value":{"latitude":52.1,"longitude":4.3}},
          "friend":{"type":"REFERENCE","value":{"recordName":"kai","action":"NONE"}}}},
         {"recordType":"Artist","recordName":".kai","fields":{"name":"Kai"}}]
        """#
        #expect(cli.run(["record", "save"], input: input).status == 0)
        #expect(cli.run(["record", "save", "--zone", "Work/Stuff"], input: #"{"recordType":"N","recordName":"100%"}"#).status == 0)
        cli.run(["record", "delete", ".kai"])
        let out = CLIFixture.exec("/usr/bin/env", ["python3", "-c", Self.script, cli.store])
        #expect(out.status == 0, "\(out.stderr)")
        #expect(out.stdout == "2 3\n")
    }
}
