import Glibc
import ScaleCore
import ScalePOSIX

/// One `/dev/input/event*` node as found: what it is, or why it could not be opened.
package struct DiscoveredDevice: Sendable {
    package var path: String
    /// Its `/dev/input/by-id` and `/dev/input/by-path` links.
    package var links: [String]
    package var details: Result<Details, DeviceOpenError>

    package struct Details: Sendable {
        package var description: DeviceDescription
        package var forceFeedback: ForceFeedbackCapabilities
        /// Opened read-write: rumble possible. Read-only still allows weighing.
        package var isWritable: Bool
    }

    package var candidate: DeviceCandidate? {
        guard case .success(let details) = details else { return nil }
        return DeviceCandidate(path: path, description: details.description, links: links)
    }
}

/// Why no device could be chosen, with what to do.
package struct DeviceSelectionError: Error, Sendable, CustomStringConvertible {
    package var description: String
    /// The open failure behind it, when a device was there but could not be opened (a
    /// missing permission, most often).
    package var openError: DeviceOpenError?

    package init(description: String, openError: DeviceOpenError? = nil) {
        self.description = description
        self.openError = openError
    }
}

/// Finds input devices and picks the one to weigh with.
package enum DeviceDiscovery {
    /// `/dev/input`, or `FORCESCALE_INPUT_DIR` when set: tests point it at a folder of
    /// their own, and containers can point it at a mounted device directory.
    package static var inputDirectory: String {
        Environment.value("FORCESCALE_INPUT_DIR").flatMap { $0.isEmpty ? nil : $0 } ?? "/dev/input"
    }

    /// Opens every event node briefly to describe it.
    /// - Parameters:
    ///   - directory: Where the nodes are.
    ///   - excluding: Nodes to leave out (those already open).
    package static func scan(directory: String = inputDirectory, excluding: Set<String> = []) -> [DiscoveredDevice] {
        let links = symlinks(in: directory)
        return eventNodes(in: directory).filter { !excluding.contains($0) }.map { path in
            let details: Result<DiscoveredDevice.Details, DeviceOpenError>
            do throws(DeviceOpenError) {
                let device = try EvdevDevice(path: path, wantsWrite: true)
                details = .success(.init(
                    description: device.description, forceFeedback: ForceFeedbackCapabilities(of: device),
                    isWritable: device.isWritable))
            } catch {
                details = .failure(error)
            }
            return DiscoveredDevice(path: path, links: links[path] ?? [], details: details)
        }
    }

    /// Chooses the device to weigh with.
    /// - Parameters:
    ///   - query: What the user asked for with `--device`, or `nil` for the best device
    ///     (pressure pads and pen tablets first).
    ///   - devices: The result of `scan`.
    /// - Throws: `DeviceSelectionError` saying what was found and what to do.
    package static func choose(_ query: DeviceQuery?, from devices: [DiscoveredDevice]) throws(DeviceSelectionError) -> DeviceCandidate {
        let candidates = devices.compactMap(\.candidate)
        let unopenable = devices.compactMap { device -> DeviceOpenError? in
            if case .failure(let error) = device.details { return error }
            return nil
        }
        guard let query else {
            if let best = DeviceRanking.ranked(candidates).first { return best }
            var message = "no pressure device found: none of the \(devices.count) input devices reports usable pressure"
            if let first = unopenable.first {
                message += "; \(unopenable.count) could not be opened, e.g. \(first)"
            }
            throw DeviceSelectionError(
                description: message + ". 'forcescale devices' lists what is there; 'forcescale demo' runs without one",
                openError: unopenable.first)
        }
        let matches = candidates.filter(query.matches)
        if let usable = DeviceRanking.ranked(matches).first { return usable }
        if let refused = matches.first {
            do {
                _ = try PressureSource.select(for: refused.description)
            } catch {
                throw DeviceSelectionError(description: "\(refused.path): \(error)")
            }
        }
        if case .path(let path) = query.criterion,
           let failure = devices.first(where: { $0.path == path || $0.links.contains(path) }),
           case .failure(let error) = failure.details {
            throw DeviceSelectionError(description: error.description, openError: error)
        }
        var message = "no input device matches \(query)"
        if !unopenable.isEmpty { message += " among those that could be opened (\(unopenable.count) could not: \(unopenable[0]))" }
        throw DeviceSelectionError(description: message + "; 'forcescale devices' lists them", openError: unopenable.first)
    }

    /// Chooses every device to weigh with, in the order of their nodes.
    /// - Parameters:
    ///   - queries: What the user asked for with `--device` (each may match several
    ///     devices), or none for every device with usable pressure.
    ///   - devices: The result of `scan`.
    /// - Returns: The devices, at least one.
    /// - Throws: `DeviceSelectionError` when none is usable, saying what was found and what
    ///   to do, as `choose` says it for the first query.
    package static func chooseEvery(_ queries: [DeviceQuery], from devices: [DiscoveredDevice]) throws(DeviceSelectionError) -> [DeviceCandidate] {
        let usable = Set(DeviceRanking.ranked(devices.compactMap(\.candidate)).map(\.path))
        let chosen = devices.compactMap(\.candidate).filter { candidate in
            usable.contains(candidate.path) && (queries.isEmpty || queries.contains { $0.matches(candidate) })
        }
        guard chosen.isEmpty else { return chosen }
        // Nothing usable: `choose` says why, as it does for one device.
        return [try choose(queries.first, from: devices)]
    }

    /// Chooses the device to rumble: the first that can (FF_RUMBLE, or a pressure pad's
    /// FF_HAPTIC), among those matching `query` (or among all, without one). A gamepad often has several nodes with the same name and
    /// vendor:product, and only one of them has force feedback.
    /// - Returns: The device's path.
    /// - Throws: `DeviceSelectionError` saying what was found instead.
    package static func chooseRumbler(_ query: DeviceQuery?, from devices: [DiscoveredDevice]) throws(DeviceSelectionError) -> String {
        let matching = devices.filter { device in
            guard let query else { return true }
            if let candidate = device.candidate { return query.matches(candidate) }
            if case .path(let path) = query.criterion { return device.path == path || device.links.contains(path) }
            return false
        }
        let canRumble: (DiscoveredDevice) -> Bool = {
            if case .success(let details) = $0.details { details.forceFeedback.canGiveFeedback } else { false }
        }
        if let rumbler = matching.first(where: canRumble) { return rumbler.path }
        guard let first = matching.first else {
            if let query {
                throw DeviceSelectionError(description: "no input device matches \(query); 'forcescale devices' lists them")
            }
            throw DeviceSelectionError(description: "no device with force feedback (FF_RUMBLE or FF_HAPTIC) found among \(devices.count) input devices; 'forcescale devices' shows each device's rumble support")
        }
        switch first.details {
        case .failure(let error):
            throw DeviceSelectionError(description: error.description, openError: error)
        case .success(let details):
            throw DeviceSelectionError(description: "\(first.path) (\(details.description.name)) has no force feedback (FF_RUMBLE or FF_HAPTIC); try a gamepad or a haptic touchpad ('forcescale devices' shows rumble support)")
        }
    }

    /// `/dev/input/eventN` paths in natural order (event2 before event10).
    static func eventNodes(in directory: String) -> [String] {
        entries(of: directory).filter { $0.hasPrefix("event") }
            .sorted { (Int($0.dropFirst(5)) ?? 0, $0) < (Int($1.dropFirst(5)) ?? 0, $1) }
            .map { directory + "/" + $0 }
    }

    /// The by-id and by-path links, keyed by the event node they point to.
    static func symlinks(in directory: String) -> [String: [String]] {
        var result: [String: [String]] = [:]
        for folder in ["by-id", "by-path"] {
            let linkDirectory = directory + "/" + folder
            for name in entries(of: linkDirectory) {
                let link = linkDirectory + "/" + name
                var buffer = [CChar](repeating: 0, count: 4096)
                let length = readlink(link, &buffer, buffer.count - 1)
                guard length > 0 else { continue }
                let target = String(decoding: buffer[0..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
                // Links are relative ("../event5").
                guard let base = target.split(separator: "/").last, base.hasPrefix("event") else { continue }
                result[directory + "/" + base, default: []].append(link)
            }
        }
        return result.mapValues { $0.sorted() }
    }

    static func entries(of directory: String) -> [String] {
        guard let stream = opendir(directory) else { return [] }
        defer { closedir(stream) }
        var names: [String] = []
        while let entry = readdir(stream) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }
}
