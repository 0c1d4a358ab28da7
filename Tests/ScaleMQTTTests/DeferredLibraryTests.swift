import CDeferredLibrary
import Glibc
import Testing

/// CDeferredLibrary, which loads libmosquitto and libmicrohttpd when a program first calls
/// them: what it resolves, and what it says when it cannot.
@Suite struct DeferredLibraryTests {
    /// A library description with its strings and tables allocated for the test's length.
    final class Description {
        var library = deferred_library()
        private var strings: [UnsafeMutablePointer<CChar>] = []
        private let names: UnsafeMutablePointer<UnsafePointer<CChar>?>
        let functions: UnsafeMutablePointer<UnsafeMutableRawPointer?>

        init(soname: String, package: String, names functionNames: [String]) {
            names = .allocate(capacity: functionNames.count)
            functions = .allocate(capacity: functionNames.count)
            functions.initialize(repeating: nil, count: functionNames.count)
            library.soname = UnsafePointer(keep(soname))
            library.package = UnsafePointer(keep(package))
            for (index, name) in functionNames.enumerated() { names[index] = UnsafePointer(keep(name)) }
            library.names = UnsafePointer(names)
            library.count = functionNames.count
            library.functions = functions
        }

        deinit {
            strings.forEach { free($0) }
            names.deallocate()
            functions.deallocate()
        }

        private func keep(_ text: String) -> UnsafeMutablePointer<CChar> {
            let copy = strdup(text)!
            strings.append(copy)
            return copy
        }

        var error: String { withUnsafeBytes(of: library.error) { String(cString: $0.bindMemory(to: CChar.self).baseAddress!) } }
    }

    @Test func resolvesEveryNamedFunctionOfARealLibrary() {
        let description = Description(soname: "libmosquitto.so.1", package: "libmosquitto1", names: ["mosquitto_lib_version", "mosquitto_strerror"])
        #expect(deferred_library_load(&description.library) == 1, "\(description.error)")
        let resolved = description.functions[0].map { unsafeBitCast($0, to: (@convention(c) (UnsafeMutablePointer<Int32>?, UnsafeMutablePointer<Int32>?, UnsafeMutablePointer<Int32>?) -> Int32).self) }
        var major: Int32 = 0
        #expect(resolved?(&major, nil, nil) ?? 0 >= 1_000_000, "mosquitto_lib_version, called through the resolved pointer")
        #expect(major >= 1)
        #expect(description.functions[1] != nil)
        // A second load is the first's result, without opening the library again.
        #expect(deferred_library_load(&description.library) == 1)
    }

    @Test func aMissingLibraryIsNamedWithThePackageToInstall() {
        let description = Description(soname: "libforcescale-absent.so.7", package: "libforcescale-absent7", names: ["anything"])
        #expect(deferred_library_load(&description.library) == 0)
        #expect(description.error.hasPrefix("cannot load libforcescale-absent.so.7 (libforcescale-absent.so.7: cannot open shared object file"), "\(description.error)")
        #expect(description.error.hasSuffix("; install Debian's libforcescale-absent7"), "\(description.error)")
        #expect(description.functions[0] == nil)
    }

    @Test func aFunctionTheLibraryLacksIsNamed() {
        let description = Description(soname: "libmosquitto.so.1", package: "libmosquitto1", names: ["mosquitto_strerror", "mosquitto_no_such_function"])
        #expect(deferred_library_load(&description.library) == 0)
        #expect(description.error == "libmosquitto.so.1 has no mosquitto_no_such_function; install Debian's libmosquitto1 as this build expects it")
    }
}
