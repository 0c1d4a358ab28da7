#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Writes text to standard output exactly as given.
///
/// - Parameter text: The bytes to write, including any final newline.
package func writeToStandardOutput(_ text: String) {
    // `print` shares the buffer with the command body's own output, so the order is kept.
    print(text, terminator: "")
}

/// Writes text to standard error exactly as given.
///
/// - Parameter text: The bytes to write, including any final newline.
package func writeToStandardError(_ text: String) {
    // Standard error is unbuffered, so write the bytes straight to the descriptor.
    var bytes = Array(text.utf8)[...]
    while !bytes.isEmpty {
        let written = bytes.withUnsafeBytes { write(STDERR_FILENO, $0.baseAddress, $0.count) }
        if written < 0 && errno == EINTR { continue }
        guard written > 0 else { return }
        bytes = bytes.dropFirst(written)
    }
}

/// The width of the terminal standard output is shown on, or 80 when it is not a terminal.
///
/// Help is wrapped to this width, as swift-argument-parser wraps it.
///
/// - Returns: The number of columns.
package func standardOutputWidth() -> Int {
    var size = winsize()
    guard ioctl(STDOUT_FILENO, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 else { return 80 }
    return Int(size.ws_col)
}
