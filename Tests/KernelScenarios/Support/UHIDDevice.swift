import Foundation
import Glibc

/// A HID device made through `/dev/uhid` (linux/uhid.h): the kernel's HID core parses its
/// report descriptor and hands it to the driver that claims it (hid-multitouch,
/// hid-magicmouse, wacom, hid-generic), which makes the evdev devices. Reports are sent with
/// `send`; a thread of its own answers the driver's GET_REPORT and SET_REPORT requests from
/// the device's feature reports, as hardware would, so that the driver's probe never waits
/// for a reply that does not come.
public final class UHIDDevice: @unchecked Sendable {
    /// What the device is: its identity, its report descriptor, and its feature reports.
    public struct Description: Sendable {
        public var name: String
        public var bus: UInt16
        public var vendor: UInt32
        public var product: UInt32
        public var version: UInt32 = 0x0100
        public var reportDescriptor: [UInt8]
        /// Feature reports by report number, each with its report ID first (as GET_REPORT
        /// answers them); a request for another number is answered with EIO.
        public var featureReports: [UInt8: [UInt8]] = [:]

        public init(name: String, bus: UInt16, vendor: UInt32, product: UInt32, reportDescriptor: [UInt8], featureReports: [UInt8: [UInt8]] = [:]) {
            self.name = name
            self.bus = bus
            self.vendor = vendor
            self.product = product
            self.reportDescriptor = reportDescriptor
            self.featureReports = featureReports
        }
    }

    /// An evdev device the driver made for it.
    public struct Node: Sendable, CustomStringConvertible {
        public var path: String
        public var name: String
        public var description: String { "\(path) (\(name))" }
    }

    /// What the driver asked of the device.
    public struct Requests: Sendable {
        public var getReports: [UInt8] = []
        public var setReports: [(number: UInt8, data: [UInt8])] = []
        public var outputs: [[UInt8]] = []
        public var opened = false
        public var problems: [String] = []
    }

    public let description: Description
    private let descriptor: Int32
    private let lock = NSLock()
    private var requests = Requests()
    private var servicing = true
    private var serviceDone = false

    // linux/uhid.h: event types, and the size of struct uhid_event (its largest member is
    // uhid_create2_req: 128 + 64 + 64 + 2 + 2 + 4 × 4 + 4096 bytes, after the 4-byte type).
    static let destroyEvent: UInt32 = 1
    static let startEvent: UInt32 = 2
    static let openEvent: UInt32 = 4
    static let closeEvent: UInt32 = 5
    static let outputEvent: UInt32 = 6
    static let getReportEvent: UInt32 = 9
    static let getReportReplyEvent: UInt32 = 10
    static let create2Event: UInt32 = 11
    static let input2Event: UInt32 = 12
    static let setReportEvent: UInt32 = 13
    static let setReportReplyEvent: UInt32 = 14
    static let eventSize = 4 + 4372
    static let dataMaximum = 4096

    /// Creates the device; its nodes come when the driver has probed it (`nodes(...)`).
    /// - Throws: `DeviceError` when /dev/uhid cannot be opened or refuses the device.
    public init(_ description: Description) throws {
        self.description = description
        if access("/dev/uhid", F_OK) != 0 { _ = runToEnd("modprobe uhid", ["/sbin/modprobe", "uhid"], timeout: 60) }
        let fd = Glibc.open("/dev/uhid", O_RDWR | O_CLOEXEC)
        guard fd >= 0 else { throw DeviceError("/dev/uhid: \(String(cString: strerror(errno))) (modprobe uhid as root)") }
        var event = [UInt8](repeating: 0, count: Self.eventSize)
        Self.put(Self.create2Event, at: 0, in: &event)
        Self.put(string: description.name, at: 4, size: 128, in: &event)
        Self.put(string: "forcescale-kernel-tests/uhid", at: 132, size: 64, in: &event)
        Self.put(UInt16(description.reportDescriptor.count), at: 260, in: &event)
        Self.put(description.bus, at: 262, in: &event)
        Self.put(description.vendor, at: 264, in: &event)
        Self.put(description.product, at: 268, in: &event)
        Self.put(description.version, at: 272, in: &event)
        event.replaceSubrange(280..<(280 + description.reportDescriptor.count), with: description.reportDescriptor)
        guard Self.write(event, to: fd) else {
            let error = DeviceError("\(description.name): UHID_CREATE2: \(String(cString: strerror(errno)))")
            Glibc.close(fd)
            throw error
        }
        descriptor = fd
        Thread.detachNewThread { [self] in serve() }
    }

    /// The evdev nodes the driver made, once there are `count` of them (a driver may make
    /// several: a touchpad and a mouse, a pen and its pad), each with its name.
    /// - Returns: `nil` when they did not all come within the limit.
    public func nodes(atLeast count: Int = 1, within limit: Double = 60) -> [Node]? {
        var found: [Node] = []
        let done = waitUntil(limit) {
            found = Self.eventNodes(vendor: description.vendor, product: description.product)
            return found.count >= count && found.allSatisfy { fileExists($0.path) }
        }
        return done ? found : nil
    }

    /// Input reports: each with its report ID first, as the device sends it.
    @discardableResult
    public func send(_ report: [UInt8]) -> Bool {
        var event = [UInt8](repeating: 0, count: Self.eventSize)
        Self.put(Self.input2Event, at: 0, in: &event)
        Self.put(UInt16(report.count), at: 4, in: &event)
        event.replaceSubrange(6..<(6 + report.count), with: report)
        return Self.write(event, to: descriptor)
    }

    public var driverRequests: Requests { lock.lock(); defer { lock.unlock() }; return requests }

    /// Removes the device (its nodes go) and stops answering.
    public func destroy() {
        var event = [UInt8](repeating: 0, count: Self.eventSize)
        Self.put(Self.destroyEvent, at: 0, in: &event)
        _ = Self.write(event, to: descriptor)
        lock.lock()
        servicing = false
        lock.unlock()
        waitUntil(5) { lock.lock(); defer { lock.unlock() }; return serviceDone }
        Glibc.close(descriptor)
    }

    // MARK: - The device side

    private func serve() {
        var buffer = [UInt8](repeating: 0, count: Self.eventSize)
        while true {
            lock.lock()
            let keepGoing = servicing
            lock.unlock()
            guard keepGoing else { break }
            var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, 50) > 0 else { continue }
            let count = buffer.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
            guard count >= 4 else { continue }
            handle(Array(buffer[0..<count]))
            Changes.announce()
        }
        lock.lock()
        serviceDone = true
        lock.unlock()
    }

    private func handle(_ event: [UInt8]) {
        switch Self.u32(event, at: 0) {
        case Self.getReportEvent:
            let id = Self.u32(event, at: 4)
            let number = event[8]
            record { $0.getReports.append(number) }
            var reply = [UInt8](repeating: 0, count: Self.eventSize)
            Self.put(Self.getReportReplyEvent, at: 0, in: &reply)
            Self.put(id, at: 4, in: &reply)
            if let report = description.featureReports[number] {
                Self.put(UInt16(report.count), at: 10, in: &reply)
                reply.replaceSubrange(12..<(12 + report.count), with: report)
            } else {
                Self.put(UInt16(EIO), at: 8, in: &reply)
            }
            if !Self.write(reply, to: descriptor) { record { $0.problems.append("GET_REPORT_REPLY \(number): \(String(cString: strerror(errno)))") } }
        case Self.setReportEvent:
            let id = Self.u32(event, at: 4)
            let number = event[8]
            let size = min(Int(Self.u16(event, at: 10)), Self.dataMaximum)
            record { $0.setReports.append((number, Array(event[12..<(12 + size)]))) }
            var reply = [UInt8](repeating: 0, count: Self.eventSize)
            Self.put(Self.setReportReplyEvent, at: 0, in: &reply)
            Self.put(id, at: 4, in: &reply)
            if !Self.write(reply, to: descriptor) { record { $0.problems.append("SET_REPORT_REPLY \(number): \(String(cString: strerror(errno)))") } }
        case Self.outputEvent:
            let size = min(Int(Self.u16(event, at: 4 + Self.dataMaximum)), Self.dataMaximum)
            record { $0.outputs.append(Array(event[4..<(4 + size)])) }
        case Self.openEvent:
            record { $0.opened = true }
        case Self.closeEvent:
            record { $0.opened = false }
        default:
            break
        }
    }

    private func record(_ change: (inout Requests) -> Void) {
        lock.lock()
        change(&requests)
        lock.unlock()
    }

    // MARK: - Finding the nodes

    /// The event nodes of input devices with this vendor and product, from /sys/class/input.
    public static func eventNodes(vendor: UInt32, product: UInt32) -> [Node] {
        let root = "/sys/class/input"
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: root)) ?? []
        return entries.filter { $0.hasPrefix("event") }.sorted { (Int($0.dropFirst(5)) ?? 0) < (Int($1.dropFirst(5)) ?? 0) }.compactMap { event in
            let device = "\(root)/\(event)/device"
            guard let vendorText = readText(device + "/id/vendor"), let productText = readText(device + "/id/product"),
                  UInt32(vendorText, radix: 16) == vendor, UInt32(productText, radix: 16) == product else { return nil }
            return Node(path: "/dev/input/" + event, name: readText(device + "/name") ?? "?")
        }
    }

    public static func readText(_ path: String) -> String? {
        (try? String(contentsOfFile: path, encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    // MARK: - Bytes (uhid's structures are packed and little-endian on the machines we test)

    static func put<T: FixedWidthInteger>(_ value: T, at offset: Int, in bytes: inout [UInt8]) {
        withUnsafeBytes(of: value.littleEndian) { bytes.replaceSubrange(offset..<(offset + MemoryLayout<T>.size), with: $0) }
    }

    static func put(string: String, at offset: Int, size: Int, in bytes: inout [UInt8]) {
        let utf8 = Array(string.utf8.prefix(size - 1))
        bytes.replaceSubrange(offset..<(offset + utf8.count), with: utf8)
    }

    static func u32(_ bytes: [UInt8], at offset: Int) -> UInt32 {
        UInt32(bytes[offset]) | UInt32(bytes[offset + 1]) << 8 | UInt32(bytes[offset + 2]) << 16 | UInt32(bytes[offset + 3]) << 24
    }

    static func u16(_ bytes: [UInt8], at offset: Int) -> UInt16 { UInt16(bytes[offset]) | UInt16(bytes[offset + 1]) << 8 }

    static func write(_ bytes: [UInt8], to descriptor: Int32) -> Bool {
        bytes.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) } == bytes.count
    }
}
