import Foundation

/// The time as the store records it.
package enum Clock {
    /// Milliseconds since 1970, as record timestamps hold them.
    public static func milliseconds() -> Int64 { Int64((Date().timeIntervalSince1970 * 1000).rounded()) }
}
