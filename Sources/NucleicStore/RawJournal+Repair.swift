#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import NucleicProtocol

extension RawJournal {
    /// A header is a few hundred bytes; a first line longer than this is not one.
    static let maximumHeaderLength: Int64 = 1 << 20

    struct Opened {
        var header: Header
        var firstRecord: Int64
        var end: Int64
        var report: RepairReport
    }

    /// Reads the header (writing it into an empty file), then cuts a torn or undecodable tail:
    /// an unterminated last line is dropped; a complete last record that does not decode is moved
    /// aside, and the one before it checked, until the last record decodes.
    static func openAndRepair(fd: Int32, path: String, header given: Header?) throws(StoreError) -> Opened {
        var report = RepairReport()
        let size = try FileIO.size(fd, path: path)
        report.lengthBefore = size
        // The header: the first line. A file with no newline at all never got past writing its
        // header (a crash while creating it): start it again. (Found with `nextSpan`, in constant
        // memory, whatever the file holds.)
        let headerSpan = try LineReader(fd: fd, path: path, from: 0, limit: size).nextSpan(prefixLength: 0)
        guard let headerSpan else {
            guard let given else {
                throw StoreError(size == 0 ? .notFound : .corrupt,
                                 "raw journal \(path) has no header line and none was given to create it", path: path)
            }
            var bytes = JSONWriter.bytes(given.json)
            bytes.append(0x0A)
            try FileIO.truncate(fd, to: 0, path: path)
            try FileIO.writeAll(fd, bytes, at: 0, path: path)
            try FileIO.sync(fd, path: path)
            try FileIO.syncDirectory(FileIO.parentDirectory(path))
            report.tornBytes = size
            report.lengthAfter = Int64(bytes.count)
            return Opened(header: given, firstRecord: Int64(bytes.count), end: Int64(bytes.count), report: report)
        }
        guard headerSpan.length <= Self.maximumHeaderLength else {
            throw StoreError(.corrupt, "\(path): the first line is \(headerSpan.length) bytes, too long for a fixture header; this is not a raw journal",
                             path: path)
        }
        let header = try parseHeader(try FileIO.read(fd, count: Int(headerSpan.length), at: 0, path: path), path: path)
        let firstRecord = headerSpan.end

        var end = size
        var damagedFrom: Int64?
        while end > firstRecord {
            guard let newline = try Repair.lastNewline(fd, path: path, before: end, floor: firstRecord - 1) else { break }
            if newline + 1 < end {
                // An unterminated last line: torn.
                report.tornBytes += end - (newline + 1)
                end = newline + 1
                continue
            }
            if newline + 1 == firstRecord { break }  // only the header is left
            let lineStart = (try Repair.lastNewline(fd, path: path, before: newline, floor: firstRecord - 1) ?? (firstRecord - 1)) + 1
            var bytes = try FileIO.read(fd, count: Int(newline - lineStart), at: lineStart, path: path)
            if bytes.allSatisfy({ $0 == 0x20 || $0 == 0x09 || $0 == 0x0D }) { break }  // a blank line is fine
            if (try? RawRecordCodec.decode(&bytes, offset: lineStart)) != nil { break }
            report.damagedLines += 1
            damagedFrom = lineStart
            end = lineStart
        }
        if end < size {
            if let damagedFrom {
                report.savedTo = try Repair.saveAside(fd, path: path, from: damagedFrom, to: size - report.tornBytes)
            }
            try FileIO.truncate(fd, to: end, path: path)
            try FileIO.sync(fd, path: path)
        }
        report.lengthAfter = end
        return Opened(header: header, firstRecord: firstRecord, end: end, report: report)
    }
}
