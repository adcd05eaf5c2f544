/// The program the server commands of `ckfs` become: its name, and its subcommands, which take
/// the same arguments as `ckfs serve` and `ckfs debug http-floor`.
public enum ServerProgram {
    public static let name = "ckfs-server"
    public static let serve = "serve"
    public static let httpFloor = "http-floor"
}
