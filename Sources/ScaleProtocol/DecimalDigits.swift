import ScaleCore

/// Numbers written as ASCII straight into a byte buffer, for the lines that go out per
/// reading: `String(value)`, `Double.description` and string concatenation each allocate
/// and run general code, where a reading's numbers need only their digits.
enum DecimalDigits {
    /// Appends `magnitude` in decimal with a point before its last `decimals` digits (none
    /// for 0 decimals, and at least one digit before the point), after a `-` when `negative`.
    /// - Parameter trimmingZeros: Drops zeros at the end of the fraction, down to one digit
    ///   after the point (`77.0`, `0.25`), as `Double.description` writes a number.
    static func append(
        _ magnitude: UInt64, decimals: Int, negative: Bool, trimmingZeros: Bool = false, to bytes: inout [UInt8]
    ) {
        withDigits(magnitude, decimals: decimals, negative: negative, trimmingZeros: trimmingZeros) { digits in
            bytes.append(contentsOf: digits)
        }
    }

    /// Calls `body` with the characters ``append(_:decimals:negative:trimmingZeros:to:)``
    /// appends, for a caller that puts them together with others before appending.
    static func withDigits<Result>(
        _ magnitude: UInt64, decimals: Int, negative: Bool, trimmingZeros: Bool = false,
        _ body: (UnsafeBufferPointer<UInt8>) -> Result
    ) -> Result {
        // 20 digits at most, a point and a sign: made right to left on the stack, then
        // handed over at once (one capacity check rather than one per digit).
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 32) { scratch in
            var start = scratch.count
            var rest = magnitude
            var written = 0
            repeat {
                if written == decimals, decimals > 0 {
                    start -= 1
                    scratch[start] = UInt8(ascii: ".")
                }
                start -= 1
                scratch[start] = UInt8(ascii: "0") + UInt8(rest % 10)
                rest /= 10
                written += 1
            } while rest > 0 || written <= decimals
            if negative {
                start -= 1
                scratch[start] = UInt8(ascii: "-")
            }
            var end = scratch.count
            if trimmingZeros {
                var trimmed = 0
                while trimmed < decimals - 1, scratch[end - 1] == UInt8(ascii: "0") {
                    end -= 1
                    trimmed += 1
                }
            }
            return body(UnsafeBufferPointer(rebasing: scratch[start..<end]))
        }
    }

    /// Appends `value` rounded to `decimals` places (``JSONLineWriter/round(_:decimals:)``)
    /// exactly as `Double.description` writes the rounded number.
    ///
    /// The digits are the rounded number's own: for a number under 10⁹ with at most 4
    /// decimals the nearest double to N / 10^decimals prints as N's digits, since no other
    /// decimal as short lies within half a unit in the last place of it (a unit there is
    /// under 10⁻⁷; such decimals are 10⁻⁴ apart or more); and `Double.description` switches to
    /// an exponent only below 10⁻⁴ or from 2⁵³ on. Anything else goes through `description`.
    static func appendRounded(_ value: Double, decimals: Int, to bytes: inout [UInt8]) {
        withRoundedDigits(value, decimals: decimals) { bytes.append(contentsOf: $0) }
    }

    /// Calls `body` with the characters ``appendRounded(_:decimals:to:)`` appends.
    static func withRoundedDigits<Result>(_ value: Double, decimals: Int, _ body: (UnsafeBufferPointer<UInt8>) -> Result) -> Result {
        let rounded = JSONLineWriter.round(value, decimals: decimals)
        guard (0...4).contains(decimals), rounded.magnitude < 1e9 else {
            var text = rounded.description
            return text.withUTF8(body)
        }
        // In units of the last decimal written, with one decimal at least (`77.0`).
        var scale = 1.0
        for _ in 0..<max(decimals, 1) { scale *= 10 }
        let units = (rounded * scale).rounded()
        return withDigits(UInt64(units.magnitude), decimals: max(decimals, 1), negative: units < 0, trimmingZeros: true, body)
    }
}
