import ScaleCore

extension Recording {
    /// Parses a complete recording from text.
    /// - Parameters:
    ///   - text: The evemu text.
    ///   - fileName: Named in errors.
    /// - Throws: `EvemuParseError` for a malformed line or a missing device description.
    package init(evemuText text: String, fileName: String) throws(EvemuParseError) {
        var reader = EvemuReader(fileName: fileName)
        var events: [InputEvent] = []
        var failure: EvemuParseError?
        Array(text.utf8).withUnsafeBytes { buffer in
            do throws(EvemuParseError) {
                try reader.feed(buffer) { events.append($0) }
                try reader.finish { events.append($0) }
            } catch {
                failure = error
            }
        }
        if let failure { throw failure }
        guard let device = reader.device else {
            throw EvemuParseError(file: fileName, line: 1, problem: "no device description (N:, I:, B:, A: lines)")
        }
        self.init(device: device, events: events)
    }
}
