import ArgumentParsing
import ScaleCore
import ScaleEvdev
import ScalePOSIX
import ScaleRecording

/// A command that could not do its job: the message for standard error and the status.
struct CommandFailure: Error, CustomStringConvertible {
    var description: String
    var status: Int32

    /// Maps the errors of the modules onto a message and an exit status.
    init(_ error: any Error) {
        switch error {
        case let failure as CommandFailure:
            self = failure
        case let error as RecordingError:
            switch error {
            case .file(let failure):
                let cannotOpen: Set<Errno> = [.noSuchFile, .permissionDenied, .isDirectory]
                self.init(message: failure.description, status: cannotOpen.contains(failure.errno) ? ExitStatus.noInput : ExitStatus.ioError)
            case .parse, .libinput, .noDescription, .empty, .noEvents, .noEventsInRecord:
                self.init(message: error.description, status: ExitStatus.dataError)
            case .deviceSelectionWithoutRecord:
                self.init(message: error.description, status: ExitStatus.usage)
            }
        case let error as DeviceSetupError:
            self.init(message: error.description, status: ExitStatus.dataError)
        case let error as DeviceSelectionError:
            let denied = error.openError?.errno == .permissionDenied
            self.init(message: error.description, status: denied ? ExitStatus.noPermission : ExitStatus.unavailable)
        case let error as DeviceOpenError:
            self.init(message: error.description, status: error.errno == .permissionDenied ? ExitStatus.noPermission : ExitStatus.unavailable)
        case let error as ForceFeedbackError:
            self.init(message: error.description, status: ExitStatus.unavailable)
        case let error as SystemError:
            self.init(message: error.description, status: ExitStatus.ioError)
        default:
            self.init(message: "\(error)", status: ExitStatus.failure)
        }
    }

    init(message: String, status: Int32) {
        description = message
        self.status = status
    }
}

/// Runs a command body, printing a failure as `error: …` and returning its status.
func reportingFailures(_ body: () throws -> Void) -> Int32 {
    do {
        try body()
        return ExitStatus.success
    } catch let error as Errno where error == .brokenPipe {
        // The reader went away (`forcescale replay … | head`): nothing left to do.
        return ExitStatus.success
    } catch {
        let failure = CommandFailure(error)
        try? OutputChannel.standardOutput.flush()
        printDiagnostic("error: \(failure)")
        return failure.status
    }
}

/// Prints one line to standard error, unbuffered: an error, a warning or a notice. Such a
/// line often quotes a device's name, a file name, a line of a recording or the daemon's
/// words, so the whole line is written as ``UntrustedText/escaped(_:)`` writes it: a control
/// character in any of them shows as an escape and cannot end the line, colour the terminal
/// or set its title. Every diagnostic of `forcescale` goes through here, never straight to
/// `printError`.
/// - Parameter line: The line, without its newline.
func printDiagnostic(_ line: String) {
    printError(UntrustedText.escaped(line))
}
