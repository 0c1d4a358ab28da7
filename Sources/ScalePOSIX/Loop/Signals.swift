import Glibc

/// Process-wide signal dispositions.
public enum Signals {
    /// Turns a vanished reader (`forcescale replay … | head`) into an `EPIPE` error from
    /// `write`, which the commands end on quietly, instead of a death by `SIGPIPE`.
    public static func ignoreBrokenPipe() {
        signal(SIGPIPE, SIG_IGN)
    }
}
