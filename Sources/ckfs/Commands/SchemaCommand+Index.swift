import ArgumentParser
import CloudStore

extension SchemaCommand {
    struct Index: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "index",
            abstract: "Add or remove a field's index (queryable, sortable, searchable) in development.",
            subcommands: [IndexAdd.self, IndexRemove.self]
        )
    }

    /// The arguments of `schema index add` and `remove`: which index of which field.
    struct IndexArguments: ParsableArguments {
        @Argument(help: "The record type.") var type: String
        @Argument(help: "The field.") var field: String
        @Argument(help: "queryable, sortable or searchable.") var index: String

        func validate() throws {
            guard SchemaIndex(rawValue: index.uppercased()) != nil else {
                throw ValidationError("no index \"\(index)\": say queryable, sortable or searchable")
            }
        }

        var schemaIndex: SchemaIndex { SchemaIndex(rawValue: index.uppercased())! }

        /// Gives the field the index (`present`) or takes it away, and says so.
        func set(present: Bool, _ options: DatabaseOptions) throws {
            try reportingErrors {
                try options.openStore().container(options.container).schema.setIndex(schemaIndex, on: field, of: type, present: present)
                print("\(type).\(field) is \(present ? "" : "no longer ")\(schemaIndex.word) in development; `ckfs schema deploy` copies that to production")
            }
        }
    }
}
