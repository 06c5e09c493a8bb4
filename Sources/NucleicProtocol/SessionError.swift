/// Why the host refused a request: the code and message a client is sent.
public struct SessionError: Error, Sendable, Hashable, CustomStringConvertible {
    public let code: HostMsg.ErrorCode
    public let message: String

    public init(_ code: HostMsg.ErrorCode, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "\(code.rawValue): \(message)" }
}
