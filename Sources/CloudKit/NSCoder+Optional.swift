import Foundation
import CloudStore

/// Reading keys an archive may not have. Linux Foundation's keyed unarchiver fails the whole
/// decode for a missing key, where Apple's answers nil, so optional values are looked for first.
extension NSCoder {
    func decodeObjectIfPresent<T: NSObject & NSCoding>(of type: T.Type, forKey key: String) -> T? {
        containsValue(forKey: key) ? decodeObject(of: type, forKey: key) : nil
    }

    func decodeObjectIfPresent(of classes: [AnyClass], forKey key: String) -> Any? {
        containsValue(forKey: key) ? decodeObject(of: classes, forKey: key) : nil
    }

    func decodeStringIfPresent(forKey key: String) -> String? {
        decodeObjectIfPresent(of: NSString.self, forKey: key) as String?
    }
}
