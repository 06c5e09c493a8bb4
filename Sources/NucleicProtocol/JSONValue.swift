/// placeholder replaced below
public enum JSONValue: Sendable, Hashable {
    case null
}
