import ArgumentParser
import CloudStore
import Foundation

extension PermissionCommand {
    struct Request: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "request", abstract: "Ask for the permission once (on the terminal, or --grant/--deny); a decision is never asked again.")
        @OptionGroup var place: StoreOptions
        @Argument(help: "The permission: discoverability.") var permission: ApplicationPermission
        @Flag(help: "Answer yes without a terminal.") var grant = false
        @Flag(help: "Answer no without a terminal.") var deny = false

        func validate() throws {
            if grant && deny { throw ValidationError("--grant and --deny contradict each other; give one") }
        }

        func run() throws {
            try reportingErrors {
                let container = try place.openStore().container(place.container)
                let (grant, deny) = (self.grant, self.deny)
                let status = try container.requestPermission(permission, caller: place.caller) { () -> Bool? in
                    if grant { return true }
                    if deny { return false }
                    return Container.terminalPrompt("Let people who know your email address find you in \(container.identifier)?")
                }
                print(status.rawValue)
                if status == .couldNotComplete {
                    Report.printError("ckfs: no answer: there is no terminal to ask on; answer with --grant or --deny")
                    throw ExitCode(1)
                }
            }
        }
    }
}
