/// The parsed records one opening of a zone keeps (``ZoneFolder``): at most `limit` of
/// them, within the bytes the store object's zones share (``RecordCacheBudget``). A value,
/// guarded by the lock of the storage's `state`.
///
/// When full it lets go of records by CLOCK, the second-chance approximation of least
/// recently used that kernels' page caches use: the records sit in a ring of slots, a record
/// read from the cache is marked, and a hand going round the ring lets go of the first record
/// not marked, clearing the marks it passes. A record put in is not marked, so records saved
/// or read once (a writer's stream of new records, a listing) go before the ones read again.
/// It costs O(1) a record amortized, and keeps the records in use, where letting records go in
/// the dictionary's order would lose some of them to every insert into a full cache.
struct RecordCache {
    private struct Slot {
        var name: String
        var record: Record
        var cost: Int
        var marked: Bool
    }

    /// The ring; nil is a free slot, whose index is in `free`.
    private var slots: [Slot?] = []
    private var free: [Int] = []
    private var slotOf: [String: Int] = [:]
    private var hand = 0
    /// Whether a record was read or put in since the zones were last asked for room
    /// (``RecordCacheBudget/relieve(except:)``).
    private var used = false
    /// What the records kept took from `budget`.
    private(set) var bytes = 0
    let budget: RecordCacheBudget
    /// The most records kept.
    let limit: Int

    init(budget: RecordCacheBudget, limit: Int) {
        self.budget = budget
        self.limit = max(limit, 1)
    }

    /// The record kept under `name`, marked as read.
    mutating func lookup(_ name: String) -> Record? {
        guard let i = slotOf[name] else { return nil }
        used = true
        slots[i]!.marked = true
        return slots[i]!.record
    }

    /// Whether a record is kept under `name`, without marking it.
    func contains(_ name: String) -> Bool { slotOf[name] != nil }

    var isEmpty: Bool { slotOf.isEmpty }
    var count: Int { slotOf.count }
    /// The slots of the ring, kept or free.
    var slotCount: Int { slots.count }

    /// Keeps `record`, in place of any version of it kept (which keeps its mark). Past the
    /// count, the hand lets one record go; over the shared bytes, it lets go of this zone's
    /// records until the record fits, at most an eighth of them, and when the other zones
    /// hold the budget, `record` is not kept and the budget hears that room was wanted.
    mutating func insert(_ record: Record) {
        let name = record.recordID.recordName
        used = true
        let marked = slotOf[name].map { slots[$0]!.marked } ?? false
        remove(name)
        if slotOf.count >= limit { evictOne() }
        let cost = RecordCacheBudget.cost(of: record)
        var taken = budget.take(cost)
        var tries = max(1, slotOf.count / 8)
        while !taken, tries > 0, evictOne() {
            taken = budget.take(cost)
            tries -= 1
        }
        guard taken else {
            budget.want()
            return
        }
        let slot = Slot(name: name, record: record, cost: cost, marked: marked)
        if let i = free.popLast() {
            slots[i] = slot
            slotOf[name] = i
        } else {
            slotOf[name] = slots.count
            slots.append(slot)
        }
        bytes += cost
    }

    /// Takes a record out, giving back its bytes. A ring left mostly free is made again with
    /// only the records kept: a zone whose records went (deleted, or let go for other zones)
    /// keeps no room sized for what it once held, which a process reading zone after zone
    /// would pay for each zone it ever read.
    mutating func remove(_ name: String) {
        guard let i = slotOf.removeValue(forKey: name) else { return }
        let cost = slots[i]!.cost
        slots[i] = nil
        free.append(i)
        bytes -= cost
        budget.give(cost)
        if slotOf.isEmpty {
            (slots, free, slotOf, hand) = ([], [], [:], 0)
        } else if slots.count >= 64 && slotOf.count * 4 < slots.count {
            compact()
        }
    }

    /// Makes the ring again with only the records kept, in their order from the hand on.
    private mutating func compact() {
        var ring: [Slot?] = []
        ring.reserveCapacity(slotOf.count)
        var index: [String: Int] = Dictionary(minimumCapacity: slotOf.count)
        for i in slots.indices {
            guard let slot = slots[(hand + i) % slots.count] else { continue }
            index[slot.name] = ring.count
            ring.append(slot)
        }
        (slots, free, slotOf, hand) = (ring, [], index, 0)
    }

    /// Lets go of half the records, by the hand, when none was used since the last ask;
    /// otherwise notes that it was asked.
    mutating func shedIfIdle() {
        guard !used else {
            used = false
            return
        }
        for _ in 0..<(slotOf.count + 1) / 2 { evictOne() }
    }

    /// Takes every record out, giving back their bytes.
    mutating func removeAll() {
        (slots, free, slotOf, hand) = ([], [], [:], 0)
        budget.give(bytes)
        bytes = 0
    }

    /// Lets go of the first record past the hand that is not marked, clearing the marks it
    /// passes: within two turns of the ring. False when nothing is kept.
    @discardableResult
    private mutating func evictOne() -> Bool {
        guard !slotOf.isEmpty else { return false }
        while true {
            if hand >= slots.count { hand = 0 }
            let at = hand
            hand += 1
            guard let slot = slots[at] else { continue }
            if slot.marked {
                slots[at]!.marked = false
            } else {
                // The hand is past it first: a ring made again starts where the hand is.
                remove(slot.name)
                return true
            }
        }
    }
}
