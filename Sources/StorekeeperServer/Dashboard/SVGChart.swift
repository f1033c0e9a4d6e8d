/// A line chart of one series, drawn on the server as inline SVG (no script, no CDN): a zero-based value axis with
/// round ticks, the first, middle and last day under it, a title that screen readers announce, and each point's day and
/// value on hover (an SVG `<title>` per point). The page puts the same numbers in a table beside it.
struct SVGChart {
    var id: String
    var title: String
    var labels: [String]
    var values: [Double]
    var kind: DashboardFormat.ValueKind

    static let width = 640.0
    static let height = 220.0
    static let left = 64.0
    static let right = 12.0
    static let top = 12.0
    static let bottom = 28.0

    var svg: String {
        let plotWidth = Self.width - Self.left - Self.right
        let plotHeight = Self.height - Self.top - Self.bottom
        let finite = values.filter(\.isFinite)
        var (low, high, step) = Self.axis(min: min(0, finite.min() ?? 0), max: max(0, finite.max() ?? 0))
        // Counts tick in whole numbers (an empty chart of subscriptions reads 0, 1, not 0.25 …).
        if kind == .count, step < 1 { (high, step) = (max(high.rounded(.up), low + 1), 1) }
        func x(_ index: Int) -> Double {
            values.count <= 1 ? Self.left + plotWidth / 2 : Self.left + plotWidth * Double(index) / Double(values.count - 1)
        }
        func y(_ value: Double) -> Double { Self.top + plotHeight * (1 - (value - low) / (high - low)) }
        let titleId = DashboardFormat.escaped(id) + "-title"
        var svg = """
            <svg class="chart" role="img" aria-labelledby="\(titleId)" viewBox="0 0 \(Int(Self.width)) \(Int(Self.height))" \
            xmlns="http://www.w3.org/2000/svg"><title id="\(titleId)">\(DashboardFormat.escaped(title))</title>
            """
        // Counted, not summed: a tick count from the axis, so that rounding can never stall the loop.
        for index in 0...max(0, min(10, Int(((high - low) / step).rounded()))) {
            let tick = low + Double(index) * step
            let ty = Self.format(y(tick))
            svg += """
                <line class="grid" x1="\(Int(Self.left))" x2="\(Int(Self.width - Self.right))" y1="\(ty)" y2="\(ty)"/>\
                <text class="tick" x="\(Int(Self.left - 6))" y="\(ty)" text-anchor="end" dominant-baseline="middle">\
                \(DashboardFormat.escaped(DashboardFormat.value(tick, kind: kind)))</text>
                """
        }
        let marks = Set([0, labels.count / 2, labels.count - 1].filter { $0 >= 0 && $0 < labels.count })
        for index in marks.sorted() {
            let anchor = index == 0 ? "start" : index == labels.count - 1 ? "end" : "middle"
            svg += """
                <text class="tick" x="\(Self.format(x(index)))" y="\(Int(Self.height - 8))" text-anchor="\(anchor)">\
                \(DashboardFormat.escaped(labels[index]))</text>
                """
        }
        let points = values.enumerated().filter { $0.element.isFinite }
            .map { "\(Self.format(x($0.offset))),\(Self.format(y($0.element)))" }
        if points.count == 1 {
            let xy = points[0].split(separator: ",")
            svg += "<circle class=\"line\" cx=\"\(xy[0])\" cy=\"\(xy[1])\" r=\"3\"/>"
        } else if !points.isEmpty {
            svg += "<polyline class=\"line\" fill=\"none\" points=\"\(points.joined(separator: " "))\"/>"
        }
        // Every point answers a hover with its day and value (a <title> shows as a tooltip: no script).
        for (index, value) in values.enumerated() where value.isFinite && index < labels.count {
            svg += """
                <circle class="point" cx="\(Self.format(x(index)))" cy="\(Self.format(y(value)))" r="4"><title>\
                \(DashboardFormat.escaped(labels[index])): \(DashboardFormat.escaped(DashboardFormat.value(value, kind: kind)))</title></circle>
                """
        }
        return svg + "</svg>"
    }

    /// A value axis around `min` and `max` in at most five round steps (1, 2 or 5 × 10ⁿ).
    static func axis(min low: Double, max high: Double) -> (low: Double, high: Double, step: Double) {
        let span = high - low
        guard span > 0, span.isFinite else { return (low, low + 1, 0.25) }
        let rough = span / 4
        let magnitude = Double.pow10(rough)
        let step = [1.0, 2, 5, 10].map { $0 * magnitude }.first { $0 >= rough } ?? rough
        return ((low / step).rounded(.down) * step, (high / step).rounded(.up) * step, step)
    }

    static func format(_ value: Double) -> String {
        let rounded = (value * 10).rounded() / 10
        return rounded == rounded.rounded() ? String(Int(rounded)) : String(rounded)
    }
}

extension Double {
    /// The power of ten at or below a positive value.
    fileprivate static func pow10(_ value: Double) -> Double {
        var power = 1.0
        while power * 10 <= value { power *= 10 }
        while power > value { power /= 10 }
        return power
    }
}
