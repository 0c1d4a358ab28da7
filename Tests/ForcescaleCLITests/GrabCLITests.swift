import Foundation
import Glibc
import TestWaiting
import Testing

/// `forcescale weigh --grab` and GRAB against forcescaled serving a recording, where a grab
/// takes nothing (docs/protocol.md, GRAB) but follows the protocol: reply, bound, one at a
/// time, given back on request, when the client goes and when the bound passes. The real
/// EVIOCGRAB is tried on a kernel by scenario x (Tests/KernelScenarios).
@Suite struct GrabCLITests {
    static let grabbed = #"{"class":"GRAB","device":"letter.events","grabbed":true,"seconds":120.0}"#

    @Test func weighWithGrabTakesThePadAndGivesItBackBeforeItPrints() throws {
        let daemon = try DaemonUnderTest(recording: ExampleRecordingTests.path("letter.events"))
        defer { daemon.cleanUp() }
        let weigh = try forcescale(["weigh", "--grab", "--timeout", "30", "--socket", daemon.socketPath])
        #expect(weigh.status == 0, "\(weigh.stderr)")
        #expect(weigh.stdout.hasSuffix(" g\n"), "\(weigh.stdout)")
        // Given back: another client takes it at once.
        let client = try daemon.connect()
        #expect(client.request(#"{"class":"GRAB"}"#) == Self.grabbed)
        let log = daemon.child.stderr
        #expect(log.contains("takes letter.events for at most 35 s") && log.contains("gave letter.events back"), "\(log)")
    }

    @Test func oneGrabAtATimeAndWeighSaysWhy() throws {
        let daemon = try DaemonUnderTest(recording: ExampleRecordingTests.path("letter.events"))
        defer { daemon.cleanUp() }
        let holder = try daemon.connect()
        #expect(holder.request(#"{"class":"GRAB","seconds":300}"#) == Self.grabbed, "the bound caps what a client asks")
        #expect(holder.request(#"{"class":"GRAB"}"#)
            == #"{"class":"ERROR","message":"you hold letter.events already: give it back (GRAB with \"enable\":false) before taking it again","request":"GRAB"}"#)
        let weigh = try forcescale(["weigh", "--grab", "--timeout", "30", "--socket", daemon.socketPath])
        #expect(weigh.status == 1)
        #expect(weigh.stderr.contains("one grab at a time: letter.events is taken for another client's weighing; try again when it ends (within 120 s)"),
                "\(weigh.stderr)")
        #expect(weigh.stdout.isEmpty)
        #expect(holder.request(#"{"class":"GRAB","enable":false}"#) == #"{"class":"GRAB","device":"letter.events","grabbed":false}"#)
    }

    @Test func aClientThatGoesGivesItsGrabBack() throws {
        let daemon = try DaemonUnderTest(recording: ExampleRecordingTests.path("letter.events"))
        defer { daemon.cleanUp() }
        let holder = try daemon.connect()
        #expect(holder.request(#"{"class":"GRAB"}"#) == Self.grabbed)
        let other = try daemon.connect()
        #expect(other.request(#"{"class":"GRAB"}"#)?.hasPrefix(#"{"class":"ERROR","message":"one grab at a time"#) == true)
        holder.disconnect()
        // The daemon learns of the departure on its own loop: asked until it has.
        var reply: String?
        try waitFor("the departed client's grab to be given back", saw: { reply ?? "nothing" }) {
            reply = other.request(#"{"class":"GRAB"}"#)
            return reply == Self.grabbed
        }
        #expect(daemon.child.stderr.contains("left: letter.events is given back"))
    }

    @Test func theBoundEndsTheGrabAndTellsTheHolder() throws {
        let daemon = try DaemonUnderTest(recording: ExampleRecordingTests.path("letter.events"))
        defer { daemon.cleanUp() }
        let holder = try daemon.connect()
        #expect(holder.request(#"{"class":"GRAB","seconds":0.2}"#) == #"{"class":"GRAB","device":"letter.events","grabbed":true,"seconds":0.2}"#)
        #expect(holder.readLine() == #"{"class":"GRAB","device":"letter.events","grabbed":false,"ended":"expired"}"#)
        #expect(holder.request(#"{"class":"GRAB","enable":false}"#) == #"{"class":"GRAB","grabbed":false}"#, "nothing is held any more")
    }

    /// Ctrl-C (SIGINT) and a timeout while weigh --grab waits: the pad is given back, by the
    /// daemon when the connection goes (SIGINT ends weigh at once) or by weigh itself.
    @Test func anInterruptedOrTimedOutWeighingGivesThePadBack() throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        // Pressed without pause and never still: nothing ever settles.
        let daemon = try DaemonUnderTest(recording: try DaemonRecordings.busy(in: directory), directory: directory)
        defer { daemon.cleanUp() }
        // Started with SIGINT's default action and unblocked, as a shell's foreground job has
        // it (the test runner's children inherit it otherwise).
        let weigh = try ChildProcess("/usr/bin/python3", [
            "-c", "import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); signal.pthread_sigmask(signal.SIG_UNBLOCK, [signal.SIGINT]); os.execv(sys.argv[1], sys.argv[1:])",
            CLI.binDirectory.appendingPathComponent("forcescale").path,
            "weigh", "--grab", "--tare-first", "--timeout", "120", "--socket", daemon.socketPath,
        ])
        try waitFor("the daemon to take the pad for weigh", saw: { daemon.stderr }) { daemon.stderr.contains("takes busy.events for at most 120 s") }
        weigh.signal(SIGINT)
        let interrupted = weigh.wait()
        #expect(!interrupted.timedOut && !interrupted.exited && interrupted.stdout.isEmpty, "ended by SIGINT: \(interrupted)")
        try waitFor("the daemon to give the pad back", saw: { daemon.stderr }) { daemon.stderr.contains("left: busy.events is given back") }

        let timedOut = try forcescale(["weigh", "--grab", "--timeout", "0.5", "--socket", daemon.socketPath])
        #expect(timedOut.status == 1, "\(timedOut.stderr)")
        #expect(daemon.stderr.contains("gave busy.events back"), "weigh gives it back itself before it exits: \(daemon.stderr)")
        let client = try daemon.connect()
        #expect(client.request(#"{"class":"GRAB","seconds":5}"#) == #"{"class":"GRAB","device":"busy.events","grabbed":true,"seconds":5.0}"#)
    }
}
