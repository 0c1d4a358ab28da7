/// A cubic Hermite curve through the origin and a rising list of knots, with tangents
/// chosen by the Fritsch–Carlson rules (SIAM J. Numer. Anal. 17(2), 1980) so that it never
/// overshoots between knots: it rises wherever the knots rise.
///
/// Past the last knot it continues in a straight line with the last tangent, as a cubic's
/// own continuation is steered by no point at all.
public struct MonotoneCubic: Hashable, Sendable {
    /// Knots by rising `x`, the origin first.
    public let knots: [FitSample]
    /// The curve's slope at each knot.
    public let tangents: [Double]

    /// Builds the curve.
    /// - Parameter points: At least one point, by strictly rising `x` and strictly rising
    ///   grams (the origin is added here).
    public init(points: [FitSample]) {
        precondition(!points.isEmpty, "a monotone cubic needs a point")
        let knots = [FitSample(x: 0, grams: 0)] + points
        let count = knots.count
        var secants: [Double] = []
        secants.reserveCapacity(count - 1)
        for index in 0..<(count - 1) {
            secants.append((knots[index + 1].grams - knots[index].grams) / (knots[index + 1].x - knots[index].x))
        }
        // Step 1: the mean of the neighbouring secants inside, the one secant at each end.
        var tangents = [Double](repeating: 0, count: count)
        tangents[0] = secants[0]
        tangents[count - 1] = secants[count - 2]
        for index in 1..<(count - 1) {
            // Knots that rise on both sides never give secants of opposite signs; a flat
            // secant (equal grams) would, and a flat tangent there keeps the curve from bulging.
            tangents[index] = secants[index - 1] * secants[index] <= 0 ? 0 : (secants[index - 1] + secants[index]) / 2
        }
        // Step 2: where the tangents are too steep for their interval, scale both down onto
        // the circle of radius 3 in (α, β), inside the region where the cubic is monotone.
        for index in 0..<(count - 1) where secants[index] > 0 {
            let alpha = tangents[index] / secants[index]
            let beta = tangents[index + 1] / secants[index]
            let radius = alpha * alpha + beta * beta
            if radius > 9 {
                let tau = 3 / radius.squareRoot()
                tangents[index] = tau * alpha * secants[index]
                tangents[index + 1] = tau * beta * secants[index]
            }
        }
        self.knots = knots
        self.tangents = tangents
    }

    /// Grams at a normalised pressure.
    /// - Parameter x: Normalised pressure above 0.
    /// - Returns: The interpolated grams; past the last knot, the last tangent continues.
    public func grams(atX x: Double) -> Double {
        let last = knots.count - 1
        if x >= knots[last].x { return knots[last].grams + tangents[last] * (x - knots[last].x) }
        var upper = 1
        while x > knots[upper].x { upper += 1 }
        let lower = upper - 1
        let width = knots[upper].x - knots[lower].x
        let t = (x - knots[lower].x) / width
        let t2 = t * t
        let t3 = t2 * t
        return (2 * t3 - 3 * t2 + 1) * knots[lower].grams + (t3 - 2 * t2 + t) * width * tangents[lower]
            + (-2 * t3 + 3 * t2) * knots[upper].grams + (t3 - t2) * width * tangents[upper]
    }
}
