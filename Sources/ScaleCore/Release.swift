/// forcescale's release, which every program says for `--version` and the daemon in VERSION;
/// debian/check-version holds debian/changelog and the man pages to it.
package enum Release {
    package static let version = "0.1.0"
}
