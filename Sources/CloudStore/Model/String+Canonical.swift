import Foundation

extension String {
    /// The string in Unicode's composed form (NFC): equal strings (as Swift's `==` says) have
    /// equal bytes, and the bytes' order is the order of the strings' scalars.
    public var canonicallyComposed: String {
        utf8.allSatisfy({ $0 < 0x80 }) ? self : precomposedStringWithCanonicalMapping
    }

    /// -1, 0 or 1 as this string sorts before, with or after `other`: by their composed forms'
    /// scalars. Swift's `<` is no total order on strings that mix composed and decomposed
    /// letters (`"cafés cafés" < "cafe\u{301}s café"` and its converse are both false), which
    /// a sorted list and a cursor need.
    public func canonicalOrder(_ other: String) -> Int {
        if self == other { return 0 }
        return canonicallyComposed.utf8.lexicographicallyPrecedes(other.canonicallyComposed.utf8) ? -1 : 1
    }
}
