import Foundation
import Glibc
import TestWaiting
import Testing

/// `forcescale weigh --grab` and GRAB against forcescaled serving a recording, where a grab
/// takes nothing (docs/protocol.md, GRAB) but follows the protocol: reply, bound, one at a
/// time, given back on request, when the client goes and when the bound passes. The real
/// EVIOCGRAB is tried on a kernel by scenario w (Tests/KernelScenarios).
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
        #expect(log.contains("takes letter.events for at most 30 s") && log.contains("gave letter.events back"), "\(log)")
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
}
