/// fsck of the files: the file backend's part of `Store.check()`.
extension FileStoreBackend {
    /// Checks and repairs every file of the store: every zone of every container (replays
    /// logs, cuts torn log tails, removes temporary files, verifies every record and asset
    /// file, rebuilds usage), every user's key-value store (it must parse and keep every
    /// limit), notifications, subscriptions, `container.json`, `schema.json`, and the
    /// permissions of it all. Returns the containers whose `container.json` reads.
    /// `progress` is called before each zone and now and then within one.
    func check(progress: ((CheckProgress) -> Void)?) -> (CheckReport, containers: [String]) {
        var report = CheckReport()
        var readable: [String] = []
        checkPermissions(&report)
        removeLeftContainerFolders(&report)
        do throws(CKError) { _ = try readJSONFile(layout.settingsFile) } catch { report.damage.append(error.message) }
        let containers: [String]
        do throws(CKError) { containers = try containerIdentifiers() } catch {
            report.damage.append(error.message)
            return (report, [])
        }
        for id in containers {
            let dir = layout.containerDirectory(id)
            // Half made and still being made: nothing of it is checked or mended under the
            // import that is writing it.
            if Self.isBeingCopied(dir) {
                report.warnings.append("\(dir): container \(id) is being imported now, and is refused until the import ends; it is left as it is")
                continue
            }
            let info = checkContainerInfo(id, &report)
            if Self.isMarked(dir) {
                report.damage.append("\(dir): an import of container \(id) stopped part way (its copy-unfinished file says so), and the container is refused until it finishes; run the import again (it makes the container anew), or move the folder out of the store")
            }
            do throws(CKError) { _ = try readJSONFile(layout.schemaFile(id)) } catch { report.damage.append(error.message) }
            for env in Environment.allCases {
                let envDir = dir + "/" + env.rawValue
                var databases = [envDir + "/public"]
                if case .success(let users?) = Syscall.listDirectory(envDir + "/private") {
                    let owners = users.filter { !$0.hasPrefix(".") }.sorted()
                    databases += owners.map { envDir + "/private/" + $0 }
                    for o in owners where info != nil && info?.identity(userRecordName: StoreLayout.decode(o) ?? o) == nil {
                        report.damage.append("\(envDir)/private/\(o) belongs to no identity in container.json (a removed user's data?): put the user's entry back, or move the folder out of the store")
                    }
                }
                for db in databases {
                    checkDatabase(db, &report, progress: progress)
                    checkSubscriptions(db, owner: db == envDir + "/public" ? ZoneID.publicOwnerName : StoreLayout.decode(StoreLayout.split(db).name) ?? "", &report)
                    if db != envDir + "/public" {
                        KeyValueFile(directory: db, writer: writer, limits: settings.keyValueLimits).check(&report)
                        NotificationLog(directory: db, writer: writer).check(&report)
                    }
                }
            }
            if info != nil { readable.append(id) }
        }
        return (report, readable)
    }

    /// ckfs makes its files 0600 and its folders 0700; anything with group or other bits
    /// (a store made before, or a chmod) is named with the fix, and left as it is: a group
    /// an admin gave access on purpose is theirs to keep.
    private func checkPermissions(_ report: inout CheckReport) {
        var loose: [(path: String, mode: UInt32)] = []
        func walk(_ path: String) {
            guard case .success(let p?) = Syscall.permissions(path), !p.isSymlink else { return }
            if p.mode & 0o077 != 0 { loose.append((path, p.mode)) }
            guard p.isDirectory, case .success(let names?) = Syscall.listDirectory(path) else { return }
            for name in names.sorted() { walk(path + "/" + name) }
        }
        walk(layout.root)
        guard !loose.isEmpty else { return }
        let shown = loose.prefix(5).map { "\($0.path) (\(String($0.mode, radix: 8)))" }.joined(separator: ", ")
        report.warnings.append("\(loose.count) file(s) or folder(s) of the store can be reached by other OS users (group or other permission bits), for example \(shown); "
            + "ckfs makes its files 0600 and folders 0700 so that private data is read only through the mount: run `chmod -R go-rwx \(layout.root)` unless a group has access on purpose")
    }

    /// `container.json` must parse; a uid, email or user record name names one identity, and
    /// settings name identities that exist.
    private func checkContainerInfo(_ id: String, _ report: inout CheckReport) -> ContainerInfo? {
        let path = layout.containerFile(id)
        do throws(CKError) {
            guard let json = try readJSONFile(path) else { return nil }
            let info = try ContainerInfo(json: json, defaults: settings, path: path)
            report.users += info.users.count
            func dupes<T: Hashable>(_ values: [T]) -> [T] { Dictionary(grouping: values) { $0 }.filter { $0.value.count > 1 }.map(\.key) }
            let users = info.users.values
            for uid in dupes(users.compactMap(\.uid)) { report.damage.append("\(path): uid \(uid) belongs to several users; keep it on one") }
            for e in dupes(users.flatMap(\.emails)) { report.damage.append("\(path): email \(e) belongs to several users; keep it on one") }
            for r in dupes(users.map(\.userRecordName)) { report.damage.append("\(path): user record name \(r) belongs to several users; it must be unique") }
            let named = Set(info.restrictedUsers + info.writeRoles.values.flatMap { $0 })
            for n in named.sorted() where info.users[n] == nil {
                report.damage.append("\(path): settings name user \(n), who is not in users; add the user or remove the name")
            }
            return info
        } catch {
            report.damage.append(error.message)
            return nil
        }
    }

    /// `subscriptions.json` must parse, every subscription in it too.
    private func checkSubscriptions(_ db: String, owner: String, _ report: inout CheckReport) {
        do throws(CKError) { report.subscriptions += try SubscriptionFile(directory: db, ownerName: owner, writer: writer).all().count } catch {
            report.damage.append(error.message)
        }
    }

    /// Whether a folder or its `records` or `assets` changed in the last hour: a zone being
    /// built (an import writes one for as long as its zone takes) is not taken for one a
    /// crash left.
    static func isRecent(_ path: String) -> Bool {
        let hourAgo = Clock.milliseconds() - 3_600_000
        return [path, StoreLayout.recordsDirectory(path), StoreLayout.assetsDirectory(path)].contains { folder in
            if case .success(let st?) = Syscall.stat(folder, times: true) { return st.modified > hourAgo }
            return false
        }
    }

    /// Folders beside the containers that an import left: `.creating-…` (a container's folder
    /// before it is renamed into place; left while it is under an hour old, as a zone's) and
    /// `.discarded-…` (an unfinished container set aside to be removed).
    private func removeLeftContainerFolders(_ report: inout CheckReport) {
        guard case .success(let names?) = Syscall.listDirectory(layout.root) else { return }
        for name in names.sorted() where name.hasPrefix(".creating-") || name.hasPrefix(".discarded-") {
            let path = layout.root + "/" + name
            if name.hasPrefix(".creating-"), Self.isRecent(path) { continue }
            ZoneFolder.removeTree(path)
            report.repaired.append("\(layout.root): removed \(name), left by an import that stopped part way")
        }
    }

    private func checkDatabase(_ db: String, _ report: inout CheckReport, progress: ((CheckProgress) -> Void)?) {
        let zonesDir = StoreLayout.zonesDirectory(db)
        guard case .success(let names?) = Syscall.listDirectory(zonesDir) else { return }
        for name in names.sorted() {
            let path = zonesDir + "/" + name
            if name.hasPrefix(".creating-"), Self.isRecent(path) {
                report.warnings.append("\(path) is a zone being made (created, or restored by `ckfs import`) and is left as it is; it is removed by the first fsck after it is an hour old")
                continue
            }
            if name.hasPrefix(".creating-") || name.hasPrefix(".deleted-") {
                ZoneFolder.removeTree(path)
                report.repaired.append("\(zonesDir): removed \(name), left by an interrupted zone \(name.hasPrefix(".creating-") ? "creation" : "deletion")")
                continue
            }
            guard let zoneName = StoreLayout.decode(name) else { continue }
            let meta: ZoneMeta
            do throws(CKError) {
                guard let m = try ZoneMeta.read(StoreLayout.zoneFile(path)) else {
                    report.damage.append("\(path) has no zone.json; restore it from a backup")
                    continue
                }
                meta = m
            } catch {
                report.damage.append(error.message)
                continue
            }
            report.zones += 1
            let storage = zones.zone(directory: path, zoneID: ZoneID(zoneName: zoneName, ownerName: meta.ownerName))
            var state = CheckProgress(zones: report.zones - 1, records: report.records, zone: path)
            let result = storage.check(progress: progress.map { report in
                { (checked: Int, files: Int) in
                    state.zoneFilesChecked = checked
                    state.zoneFiles = files
                    report(state)
                }
            })
            report.records += result.records
            report.repaired += result.repaired
            report.damage += result.damage
            report.diskFull += result.diskFull
            report.warnings += result.warnings
        }
    }
}
