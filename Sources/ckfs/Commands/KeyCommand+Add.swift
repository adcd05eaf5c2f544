import ArgumentParser
import CloudStore
import CloudStoreServerCore
import Foundation

extension KeyCommand {
    struct Add: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "add", abstract: "Register a P-256 public key (PEM) and print its key ID.")
        @OptionGroup var options: StoreOptions
        @Argument(help: "A PEM file: the public key, or the EC private key whose public half is kept.") var file: String

        func run() throws {
            guard let pem = try? String(contentsOfFile: file, encoding: .utf8) else {
                throw ValidationError("cannot read \(file); give the PEM file of an EC P-256 key (openssl ecparam -name prime256v1 -genkey -noout -out eckey.pem)")
            }
            try reportingErrors {
                let container = try options.openStore().container(options.container)
                print(try container.addServerKey(pem: pem, userName: options.userName))
            }
        }
    }
}
