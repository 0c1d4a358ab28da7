import Foundation
import Glibc
import TestWaiting
import Testing

/// `forcescale watch --reconnect` across a forcescaled that is stopped and started again,
/// beside a `watch` without it, which ends as scripts expect.
@Suite struct WatchReconnectTests {
    @Test func watchReconnectKeepsShowingReadingsAcrossARestart() throws {
        let directory = try CLI.temporaryDirectory()
        let daemon = try DaemonUnderTest(recording: try DaemonRecordings.demo(in: directory), directory: directory)
        defer { daemon.cleanUp() }
        let executable = CLI.binDirectory.appendingPathComponent("forcescale").path
        let following = try ChildProcess(executable, ["watch", "--json", "--reconnect", "--socket", daemon.socketPath])
        let plain = try ChildProcess(executable, ["watch", "--json", "--socket", daemon.socketPath])
        func lines(_ child: ChildProcess) -> [Substring] { child.stdout.split(separator: "\n") }
        try waitFor("readings from both watches", every: 0.02, saw: { "\(lines(following).count) and \(lines(plain).count) lines; \(following.stderr) \(plain.stderr)" }) {
            lines(following).count >= 5 && lines(plain).count >= 5
        }

        let stopped = daemon.stop()
        #expect(stopped.exited && stopped.status == 0, "forcescaled did not stop cleanly: \(stopped.stderr)")
        // Without --reconnect: the daemon's absence is status 69, as it was.
        let ended = plain.wait()
        #expect(ended.exited && ended.status == 69, "watch without --reconnect: \(ended.status) \(ended.stderr)")
        #expect(ended.stderr.contains("forcescaled closed the connection"), "\(ended.stderr)")
        try waitFor("watch --reconnect to say it waits", every: 0.02, saw: { following.stderr }) {
            following.stderr.contains("forcescale: waiting for forcescaled (")
        }
        #expect(following.isRunning)
        let before = lines(following).count

        try daemon.start()
        try waitFor("readings after the restart", every: 0.02, saw: { "\(lines(following).count - before) new lines; \(following.stderr)" }) {
            lines(following).count >= before + 5
        }
        #expect(following.stderr.contains("forcescale: watching forcescaled "), "\(following.stderr)")
        following.signal(SIGINT)
        let watched = following.wait()
        #expect(watched.exited && watched.status == 0, "\(watched.stderr)")
        // Whole lines only, each the daemon's, before and after.
        let all = lines(following)
        #expect(all.allSatisfy { $0.hasPrefix(#"{"class":"READING","device":"demo.events","time":"#) || $0.hasPrefix(#"{"class":"PEAK""#) }, "\(all.prefix(3))")
        #expect(watched.stderr.split(separator: "\n").count == 2, "one line for the wait, one for the return: \(watched.stderr)")
    }

    /// With --reconnect, watch may start before the daemon does.
    @Test func watchReconnectWaitsForADaemonThatIsNotThereYet() throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let socket = directory.appendingPathComponent("sock").path
        let executable = CLI.binDirectory.appendingPathComponent("forcescale").path
        let watch = try ChildProcess(executable, ["watch", "--json", "--reconnect", "--socket", socket])
        try waitFor("watch --reconnect to say it waits", every: 0.02, saw: { watch.stderr }) {
            watch.stderr.contains("forcescale: waiting for forcescaled (no forcescaled is listening on \(socket)")
        }
        let daemon = try DaemonUnderTest(recording: try DaemonRecordings.demo(in: directory), directory: directory)
        defer { daemon.cleanUp() }
        try waitFor("readings once the daemon is up", every: 0.02, saw: { "\(watch.stdout.count) bytes; \(watch.stderr)" }) {
            watch.stdout.split(separator: "\n").count >= 3
        }
        watch.signal(SIGINT)
        let watched = watch.wait()
        #expect(watched.exited && watched.status == 0, "\(watched.stderr)")
    }
}
