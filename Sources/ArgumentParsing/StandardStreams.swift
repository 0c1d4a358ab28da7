#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import ScalePOSIX

/// Writes text to standard output exactly as given.
///
/// - Parameter text: The bytes to write, including any final newline.
func writeToStandardOutput(_ text: String) {
    // `print` shares the buffer with the command body's own output, so the order is kept.
    print(text, terminator: "")
}

/// Writes text to standard error exactly as given.
///
/// - Parameter text: The bytes to write, including any final newline.
package func writeToStandardError(_ text: String) {
    // Standard error is unbuffered, so the bytes go straight to the descriptor, through the
    // funnel; a standard error that cannot be written to has nobody to tell.
    var text = text
    text.withUTF8 { try? FileDescriptor.standardError.writeAll(UnsafeRawBufferPointer($0)) }
}

/// The width of the terminal standard output is shown on, or 80 when it is not a terminal.
///
/// Help is wrapped to this width, as swift-argument-parser wraps it.
///
/// - Returns: The number of columns.
func standardOutputWidth() -> Int {
    var size = winsize()
    guard ioctl(STDOUT_FILENO, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 else { return 80 }
    return Int(size.ws_col)
}
