public import NucleicProtocol

/// A session's folder, `$NUCLEIC_HOME/sessions/<id>/` (DESIGN.md §5): `raw.jsonl`,
/// `transcript.jsonl` and `transcript.idx`.
public struct SessionFolder: Sendable, Hashable {
    public let path: String

    /// The folder of `session` under the data folder `home`.
    public init(home: String, session: SessionID) {
        path = FileIO.join(FileIO.join(home, "sessions"), session.rawValue)
    }

    public init(path: String) {
        self.path = path
    }

    public var rawJournalPath: String { FileIO.join(path, RawJournal.fileName) }
    public var transcriptPath: String { FileIO.join(path, Transcript.fileName) }
    public var transcriptIndexPath: String { FileIO.join(path, Transcript.indexFileName) }

    /// Creates the folder (and its parents), durably.
    public func create() throws(StoreError) {
        try FileIO.makeDirectories(path)
    }

    public var exists: Bool { FileIO.exists(path) }

    /// Opens the transcript for appending (creating the folder if needed).
    public func openTranscript() throws(StoreError) -> Transcript {
        try create()
        return try Transcript(folder: path)
    }

    /// Opens the raw journal for appending, creating it with `header` if it does not exist.
    public func openRawJournal(creatingWith header: RawJournal.Header? = nil) throws(StoreError) -> RawJournal {
        try create()
        return try RawJournal(folder: path, creatingWith: header)
    }
}
