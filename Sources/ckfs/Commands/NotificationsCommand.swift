import ArgumentParser
import CloudStore
import Foundation

struct NotificationsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "notifications",
        abstract: "Print a user's notifications as JSON lines, and with --follow each new one as it comes.",
        discussion: """
        Each line is one notification: the subscription, the reason (recordCreated, \
        recordUpdated, recordDeleted; none for a zone notification), the database, zone and \
        record, the desired fields (isPruned when some did not fit in 4 KB), the alert, \
        isRead, and "token": pass it to --since to go on after that notification. \
        Notifications of this client's own changes (--device) are left out. With --apns each \
        line is instead the push payload ({"aps": …, "ck": …}) a device would receive.
        """
    )

    @OptionGroup var options: StoreOptions
    @Option(help: "Only notifications after this token.") var since: String?
    @Flag(help: "Keep running and print each new notification as it arrives.") var follow = false
    @Flag(help: "Only unread notifications.") var unread = false
    @Flag(help: "Mark the printed notifications read.") var markRead = false
    @Flag(help: "Print each notification as the push payload CloudKit sends a device, for CKNotification(fromRemoteNotificationDictionary:).")
    var apns = false
    @Option(help: "With --follow: how often to look for new notifications, in milliseconds.") var interval = 50

    func validate() throws {
        if interval < 1 || interval > 60_000 { throw ValidationError("--interval must be 1 to 60000 milliseconds") }
    }

    func run() throws {
        try reportingErrors {
            let store = try options.openStore()
            let container = try store.container(options.container)
            let log = try container.notificationLog(caller: options.caller, environment: options.environment)
            var follower = log.follow(since: since.map(NotificationToken.init(text:)), excludingDevice: options.deviceID)
            repeat {
                let shown = try follower.poll().filter { !unread || !$0.isRead }
                for n in shown {
                    let line = apns ? n.apnsPayload(container: container.identifier) : n.dictionary
                    FileHandle.standardOutput.write(Data(JSONWriter.compact(line) + [0x0A]))
                }
                if markRead { try log.markRead(shown.map(\.notificationID)) }
                if follow { Thread.sleep(forTimeInterval: Double(interval) / 1000) }
            } while follow
        }
    }
}
