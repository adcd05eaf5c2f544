extension Store {
    /// Checks and repairs the store: what its backend keeps (the file backend's: every zone of
    /// every container, with its log replayed, torn log tails cut, temporary files removed,
    /// every record and asset file verified and usage rebuilt; every user's key-value store,
    /// which must parse and keep every limit; the containers' files), then each container's
    /// share registry against its zones. `progress` is called before each zone and now and
    /// then within one.
    public func check(progress: ((CheckProgress) -> Void)? = nil) -> CheckReport {
        var (report, containers) = backend.check(progress: progress)
        // After the zones are repaired; only in containers whose description reads (opening
        // one would otherwise write one).
        for id in containers {
            for env in Environment.allCases { checkShareRegistry(id, env, &report) }
        }
        return report
    }

    /// Every zone holding a share must be in the container's share registry, or the share
    /// cannot be found (a store restored from a copy whose registry is older than its zones).
    private func checkShareRegistry(_ id: String, _ environment: Environment, _ report: inout CheckReport) {
        do throws(CKError) {
            let registry = ShareRegistry(container: try container(id), environment: environment)
            for entry in try registry.repair() {
                report.repaired.append("\(registry.storage.location): added zone \(entry.zone) of \(entry.owner), which holds a share")
            }
        } catch {
            report.damage.append(error.message)
        }
    }
}
