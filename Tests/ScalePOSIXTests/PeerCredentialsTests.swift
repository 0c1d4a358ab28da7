import Glibc
@testable import ScalePOSIX
import Testing

@Suite struct PeerCredentialsTests {
    @Test func rootAndTheDaemonsOwnUserAreAlwaysAllowed() {
        #expect(PeerCredentials(pid: 1, uid: 0, gid: 0).isAuthorized(group: nil, daemonUser: 999))
        #expect(PeerCredentials(pid: 1, uid: 999, gid: 999).isAuthorized(group: nil, daemonUser: 999))
        #expect(!PeerCredentials(pid: 1, uid: 1000, gid: 1000).isAuthorized(group: nil, daemonUser: 999))
    }

    @Test func membersOfTheGroupAreAllowed() {
        let primary = PeerCredentials(pid: 1, uid: 1000, gid: 123, supplementaryGroups: [])
        #expect(primary.isAuthorized(group: 123, daemonUser: 999))
        let supplementary = PeerCredentials(pid: 1, uid: 1000, gid: 1000, supplementaryGroups: [27, 123])
        #expect(supplementary.isAuthorized(group: 123, daemonUser: 999))
        let outsider = PeerCredentials(pid: 1, uid: 1000, gid: 1000, supplementaryGroups: [27])
        #expect(!outsider.isAuthorized(group: 123, daemonUser: 999))
    }

    @Test func withoutTheKernelsListTheGroupDatabaseDecides() throws {
        // root is in group root by the database; nobody is not.
        let root = try #require(UserDatabase.user(id: 0))
        #expect(root.name == "root")
        #expect(UserDatabase.groups(ofUser: "root", primaryGroup: 0).contains(0))
        #expect(PeerCredentials(pid: 1, uid: 0, gid: 5).isMember(of: 0))
        #expect(!PeerCredentials(pid: 1, uid: 65534, gid: 65534).isMember(of: 0))
        #expect(!PeerCredentials(pid: 1, uid: 4_000_000, gid: 4_000_000).isMember(of: 0))   // no such user
    }

    @Test func groupNamesResolve() {
        #expect(UserDatabase.groupID(named: "root") == 0)
        #expect(UserDatabase.groupID(named: "no-such-group-for-forcescale") == nil)
    }
}
