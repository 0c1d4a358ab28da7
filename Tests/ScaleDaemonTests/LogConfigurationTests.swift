import ScaleCore
@testable import ScaleDaemon
import ScaleLog
import Testing

@Suite struct LogConfigurationTests {
    func layer(_ text: String) throws -> ConfigurationLayer {
        try ConfigurationFile.parse(text, path: "/etc/forcescale/forcescale.conf").layer
    }

    @Test func loggingIsOffByDefault() {
        let configuration = DaemonConfiguration()
        #expect(!configuration.logs)
        #expect(configuration.logPath(stateDirectory: "/var/lib/forcescale") == nil)
        #expect(configuration.text(for: .log) == "off")
        #expect(configuration.text(for: .logKeepDays) == "forever")
    }

    @Test func logOnPutsTheFileInTheStateDirectory() throws {
        let configuration = DaemonConfiguration(layers: [try layer("log = on")])
        #expect(configuration.logPath(stateDirectory: "/var/lib/forcescale") == "/var/lib/forcescale/log.sqlite")
        #expect(configuration.logPath(stateDirectory: "/tmp/state/") == "/tmp/state/log.sqlite")
    }

    @Test func aLogFileAloneSwitchesLoggingOnUnlessLogIsOff() throws {
        let file = try layer("log-db = /srv/rig/force.sqlite")
        #expect(DaemonConfiguration(layers: [file]).logPath(stateDirectory: "/x") == "/srv/rig/force.sqlite")
        let off = try layer("log-db = /srv/rig/force.sqlite\nlog = off")
        #expect(DaemonConfiguration(layers: [off]).logPath(stateDirectory: "/x") == nil)
        // The command line's --log-db sets log too, over the file's off.
        var commandLine = ConfigurationLayer()
        commandLine.logDatabase = "/tmp/other.sqlite"
        commandLine.log = true
        #expect(DaemonConfiguration(layers: [off, commandLine]).logPath(stateDirectory: "/x") == "/tmp/other.sqlite")
    }

    @Test func retentionKeysTakeWholeNumbersInRange() throws {
        let configuration = DaemonConfiguration(layers: [try layer("log-keep-days = 7\nlog-keep-readings = 5000")])
        #expect(configuration.logRetention == LogWriter.Retention(keepDays: 7, keepReadings: 5000))
        for bad in ["log-keep-days = 0", "log-keep-days = 36501", "log-keep-days = 1.5", "log-keep-readings = 0", "log-keep-readings = -3",
                    "log = yes", "log-db = relative.sqlite", "log-db ="] {
            #expect(throws: ConfigurationError.self, "\(bad)") { try layer(bad) }
        }
        do {
            _ = try ConfigurationFile.parse("log-keep-days = 0", path: "/etc/forcescale/forcescale.conf")
            Issue.record("log-keep-days = 0 was taken")
        } catch {
            #expect(error.description == "/etc/forcescale/forcescale.conf:1: bad value '0' for 'log-keep-days': it takes a whole number of days from 1 to 36500")
        }
    }

    @Test func theLogFileNeedsARestartButRetentionAppliesAtOnce() {
        #expect(ConfigurationKey.log.reach == .restart)
        #expect(ConfigurationKey.logDatabase.reach == .restart)
        #expect(ConfigurationKey.logKeepDays.reach == .immediate)
        #expect(ConfigurationKey.logKeepReadings.reach == .immediate)
        // The summary of the settings that shape readings leaves the log out.
        #expect(!DaemonConfiguration().summary.contains("log"))
    }
}
