import Testing
import TestSupport
@testable import CloudStore
@testable import CloudStoreFS

/// The inode table's bindings: records by hashed number, collisions, renames, forgets.
@Suite struct InodeTableTests {
    let d = DatabaseKey(container: "iCloud.test", scope: .private, user: "alice")
    func note(_ name: String, type: String = "Note") -> NodeKey { .record(d, zone: "_defaultZone", type: type, name: name) }

    @Test func aRecordIsBoundWhileTheKernelHoldsIt() {
        let table = InodeTable()
        let key = note("a")
        let ino = table.inode(for: key)
        #expect(ino >> 63 == 1, "a record's number is its hash, top bit set")
        #expect(table.counts.records == 0 && table.existingInode(for: key) == nil, "numbered, not bound: no lookup yet")
        table.lookedUp(ino, key: key)
        table.lookedUp(ino, key: key)
        #expect(table.inode(for: key) == ino && table.existingInode(for: key) == ino && table.key(of: ino) == key)
        table.forget(ino, count: 1)
        #expect(table.key(of: ino) == key)
        table.forget(ino, count: 1)
        #expect(table.key(of: ino) == nil && table.counts.records == 0)
        #expect(table.inode(for: key) == ino, "the same record, the same number")
    }

    @Test func recordsWhoseNumbersCollideGetNumbersOfTheirOwn() {
        let table = InodeTable(number: { _ in 1 << 63 })
        let (a, b, c) = (note("a"), note("b"), note("c", type: "Task"))
        let ia = table.inode(for: a)
        table.lookedUp(ia, key: a)
        let ib = table.inode(for: b)
        table.lookedUp(ib, key: b)
        let ic = table.inode(for: c)
        table.lookedUp(ic, key: c)
        #expect(Set([ia, ib, ic]).count == 3)
        #expect(table.key(of: ia) == a && table.key(of: ib) == b && table.key(of: ic) == c)
        #expect(table.inode(for: b) == ib && table.existingInode(for: c) == ic)
        // The hashed number freed: the next record to ask for it gets it; b keeps its own.
        table.forget(ia, count: 1)
        #expect(table.key(of: ia) == nil && table.existingInode(for: a) == nil)
        #expect(table.inode(for: b) == ib)
        let again = table.inode(for: a)
        table.lookedUp(again, key: a)
        #expect(again == ia && table.key(of: again) == a)
        table.forget(ib, count: 1)
        table.forget(ic, count: 1)
        table.forget(again, count: 1)
        #expect(table.counts.records == 0)
    }

    @Test func aRenamedInodeFollowsItsFile() {
        let table = InodeTable()
        let (from, to) = (note("draft"), note("final"))
        let old = table.inode(for: to)
        table.lookedUp(old, key: to)
        let moved = table.inode(for: from)
        table.lookedUp(moved, key: from)
        #expect(table.rebind(from, to: to) == moved)
        #expect(table.key(of: moved) == to && table.inode(for: to) == moved && table.existingInode(for: from) == nil)
        #expect(table.key(of: old) == to, "the inode the name had stays bound until forgotten")
        table.forget(old, count: 1)
        #expect(table.inode(for: to) == moved)
        // Onto a scratch file and back, as editors save.
        #expect(table.rebind(to, to: .scratch(7)) == moved)
        #expect(table.key(of: moved) == .scratch(7) && table.existingInode(for: .scratch(7)) == moved && table.existingInode(for: to) == nil)
        #expect(table.rebind(.scratch(7), to: to) == moved)
        #expect(table.key(of: moved) == to && table.inode(for: to) == moved)
        table.forget(moved, count: 1)
        #expect(table.counts == (0, 1), "only the root is left")
    }

    @Test func otherNodesAreNumberedFromTwo() {
        let table = InodeTable()
        let zone = NodeKey.zone(d, "_defaultZone")
        let ino = table.inode(for: zone)
        #expect(ino == 2 && table.key(of: ino) == zone && table.key(of: InodeTable.rootInode) == .root)
        #expect(table.inodes { $0.zone != nil }.map(\.1) == [ino])
    }
}
