
extension ZoneFolder {
    /// What checking one zone found.
    struct CheckResult {
        var records = 0
        var repaired: [String] = []
        var damage: [String] = []
        /// What could not be checked or repaired for want of room on the disk: not damage.
        var diskFull: [String] = []
        /// What is not as it should be but loses nothing (the index, which is derived data).
        var warnings: [String] = []
    }

    /// Checks the zone under its lock: recovery, then every record file against the log
    /// (the log wins), every asset against its checksum, and the usage figure (rebuilt).
    /// `progress` is called now and then with the record files checked and their number.
    func check(progress: ((_ checked: Int, _ files: Int) -> Void)? = nil) -> CheckResult {
        var result = CheckResult()
        let name = zoneID.zoneName
        do throws(CKError) {
            try withRecovery { (recovery) throws(CKError) in
                if recovery.truncatedBytes > 0 { result.repaired.append("zone \(name): cut a torn log tail of \(recovery.truncatedBytes) bytes (an unfinished commit that was never acknowledged)") }
                if recovery.journaledEntries > 0 { result.repaired.append("zone \(name): appended \(recovery.journaledEntries) committed entries from the journal to the log (its end had not reached the disk)") }
                if let note = recovery.unmatchedJournal { result.repaired.append("zone \(name): \(note)") }
                if recovery.replayedEntries > 0 { result.repaired.append("zone \(name): replayed \(recovery.replayedEntries) committed log entries into the record files") }
                if recovery.removedTempFiles > 0 { result.repaired.append("zone \(name): removed \(recovery.removedTempFiles) temporary files of interrupted writes") }
                try checkFiles(recovery.entries, &result, progress: progress)
            }
        } catch where error.diskFull != nil {
            // Committed saves wait in the log for room to be written to their files: the log
            // is whole, so this is no damage, and the next check with room finishes them.
            result.diskFull.append("zone \(name): \(error.message)")
        } catch {
            result.damage.append("zone \(name): \(error.message)")
        }
        if result.damage.isEmpty && result.diskFull.isEmpty { checkIndex(&result) }
        return result
    }

    /// Compares the record files with the log's entries; the lock is held.
    private func checkFiles(_ entries: [LogEntry], _ result: inout CheckResult,
                            progress: ((_ checked: Int, _ files: Int) -> Void)?) throws(CKError) {
        let name = zoneID.zoneName
        var latest: [String: Record?] = [:]
        // Assets some version the log holds, or some record file, names; the rest are swept.
        var named: Set<String> = []
        var unreadable = false
        for entry in entries {
            for d in entry.deleted { latest[d.recordName] = .some(nil) }
            for r in entry.saved {
                latest[r.recordID.recordName] = .some(r)
                named.formUnion(r.assetChecksums)
            }
        }
        var usage: Int64 = 0
        var seen: Set<String> = []
        let files = try Syscall.listDirectory(recordsPath).orThrow(.internalError, "cannot list \(recordsPath)") ?? []
        for (i, file) in files.sorted().enumerated() {
            if i % 512 == 0 { progress?(i, files.count) }
            guard let recordName = StoreLayout.recordName(fromFileName: file) ?? longRecordName(file) else {
                result.damage.append("zone \(name): \(recordsPath)/\(file) is not a record file (<recordName>.json); move it out of the store")
                continue
            }
            seen.insert(recordName)
            let path = recordsPath + "/" + file
            let bytes = try Syscall.readFile(path).orThrow(.internalError, "cannot read \(path)") ?? []
            if let logged = latest[recordName] {
                guard let want = logged else {
                    try Syscall.unlink(path).orThrow(.internalError, "cannot remove \(path)")
                    result.repaired.append("zone \(name): removed record \(recordName), which the log says was deleted")
                    continue
                }
                let wantBytes = RecordCoding.fileBytes(want)
                if bytes != wantBytes {
                    try writer.replace(path, with: wantBytes, durable: true)
                    result.repaired.append("zone \(name): rewrote record \(recordName) from the log")
                }
                usage += try checkRecord(want, recordName: recordName, &result)
                continue
            }
            do throws(CKError) {
                let record = try Self.decodeRecordFile(bytes, path: path)
                named.formUnion(record.assetChecksums)
                usage += try checkRecord(record, recordName: recordName, &result)
            } catch {
                unreadable = true
                result.damage.append("zone \(name): \(error.message) — its last version is not in the log; restore it from a backup or delete the file")
            }
        }
        for (recordName, logged) in latest where !seen.contains(recordName) {
            guard let want = logged else { continue }
            try writer.replace(StoreLayout.recordFile(directory, name: recordName), with: RecordCoding.fileBytes(want), durable: true)
            result.repaired.append("zone \(name): restored missing record \(recordName) from the log")
            usage += try checkRecord(want, recordName: recordName, &result)
        }
        try fixUsage(usage, &result)
        if !unreadable { try sweepUnnamedAssets(named, &result) }
    }

    /// Removes the asset files that no record and no entry of the log names (a writer killed
    /// between storing a file and its commit leaves one), and says so.
    private func sweepUnnamedAssets(_ named: Set<String>, _ result: inout CheckResult) throws(CKError) {
        let unnamed = try assetFileChecksums().subtracting(named)
        guard !unnamed.isEmpty else { return }
        var bytes: Int64 = 0
        for sum in unnamed { bytes += storedAssetSize(sum) ?? 0 }
        removeAssets(unnamed)
        result.repaired.append("zone \(zoneID.zoneName): removed \(unnamed.count) asset file\(unnamed.count == 1 ? "" : "s") (\(bytes) bytes) that no record and no entry of the log names")
    }

    /// The name of the record a long name's file holds, when the file is that name's.
    private func longRecordName(_ file: String) -> String? {
        guard StoreLayout.isLongRecordFileName(file), let bytes = try? Syscall.readFile(recordsPath + "/" + file).get(),
              let record = try? Self.decodeRecordFile(bytes, path: recordsPath + "/" + file),
              StoreLayout.recordFileName(record.recordID.recordName) == file else { return nil }
        return record.recordID.recordName
    }

    /// Checks one record's identity and assets; returns its usage.
    private func checkRecord(_ record: Record, recordName: String, _ result: inout CheckResult) throws(CKError) -> Int64 {
        result.records += 1
        let name = zoneID.zoneName
        if record.recordID.recordName != recordName {
            result.damage.append("zone \(name): file \(StoreLayout.recordFileName(recordName)) holds record \(record.recordID.recordName); rename the file to match")
        }
        if record.recordID.zoneID.zoneName != name {
            result.damage.append("zone \(name): record \(recordName) says it is in zone \(record.recordID.zoneID.zoneName)")
        }
        for sum in record.assetChecksums {
            let path = StoreLayout.assetFile(directory, checksum: sum)
            guard let bytes = try Syscall.readFile(path).orThrow(.internalError, "cannot read \(path)") else {
                result.damage.append("zone \(name): record \(recordName) holds asset \(sum), whose file is missing; restore assets/\(sum) from a backup")
                continue
            }
            if AssetHasher.sha256Hex(bytes) != sum {
                result.damage.append("zone \(name): asset \(sum) does not match its checksum (the file was changed); restore it from a backup")
            }
        }
        return record.usageBytes
    }
}
