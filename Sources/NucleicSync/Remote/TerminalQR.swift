import CQRencode

/// A QR code for the terminal (`nucleic pair`), made by libqrencode and drawn with Unicode half
/// blocks: each character is two modules stacked (upper ▀, lower ▄, both █, none a space), so a
/// version-10 code fits in about 31 lines.
///
/// Dark modules are drawn as the terminal's foreground colour on its background: a light-on-dark
/// terminal shows the code inverted, which phone scanners read as well; `inverted` draws the
/// light modules instead. A 4-module quiet zone surrounds the code, as the standard asks.
public struct TerminalQR: Sendable, Hashable {
    /// Modules per side (without the quiet zone).
    public let size: Int
    /// Row-major, true = dark.
    public let modules: [Bool]

    public struct Failure: Error, Sendable, CustomStringConvertible {
        public let description: String
    }

    /// Encodes `text` (8-bit mode, error correction level M).
    public init(encoding text: String) throws(Failure) {
        guard let code = QRcode_encodeString8bit(text, 0, QR_ECLEVEL_M) else {
            throw Failure(description: "libqrencode could not encode \(text.utf8.count) bytes")
        }
        defer { QRcode_free(code) }
        let width = Int(code.pointee.width)
        var modules = [Bool](repeating: false, count: width * width)
        for i in 0..<(width * width) { modules[i] = code.pointee.data[i] & 1 != 0 }
        self.size = width
        self.modules = modules
    }

    public init(size: Int, modules: [Bool]) {
        precondition(modules.count == size * size)
        self.size = size
        self.modules = modules
    }

    public static let quietZone = 4

    /// Whether the module at (x, y) is dark; outside the code (the quiet zone) is light.
    public func isDark(x: Int, y: Int) -> Bool {
        guard x >= 0, y >= 0, x < size, y < size else { return false }
        return modules[y * size + x]
    }

    /// The code as lines of half blocks, quiet zone included.
    public func render(inverted: Bool = false) -> [String] {
        let q = Self.quietZone
        var lines: [String] = []
        var y = -q
        while y < size + q {
            var line = ""
            for x in -q..<(size + q) {
                let top = isDark(x: x, y: y) != inverted
                let bottom = (y + 1 < size + q) ? isDark(x: x, y: y + 1) != inverted : inverted
                line += top ? (bottom ? "█" : "▀") : (bottom ? "▄" : " ")
            }
            lines.append(line)
            y += 2
        }
        return lines
    }
}
