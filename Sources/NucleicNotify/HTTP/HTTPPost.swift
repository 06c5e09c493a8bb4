import CCurl
import CCrypto
import NucleicSystem

/// One HTTP POST through libcurl, on a thread of its own (curl_easy_perform blocks), with a
/// timeout: the status code and the first 4 KiB of the response body, or why there is none.
public enum HTTPPost {
    public struct Request: Sendable {
        public var url: String
        public var headers: [String]
        public var body: [UInt8]
        public var timeoutMilliseconds = 10_000
        /// HTTP/2 over TLS only (APNs): ALPN must agree on h2, else the request fails.
        public var requiresHTTP2 = false
        /// A PEM file of certificates to trust instead of the system's (a test's own CA).
        public var caFile: String?

        public init(url: String, headers: [String], body: [UInt8], timeoutMilliseconds: Int = 10_000, requiresHTTP2: Bool = false,
                    caFile: String? = nil) {
            self.url = url
            self.headers = headers
            self.body = body
            self.timeoutMilliseconds = timeoutMilliseconds
            self.requiresHTTP2 = requiresHTTP2
            self.caFile = caFile
        }
    }

    public struct Response: Sendable, Hashable {
        public var status: Int
        /// At most the first 4 KiB.
        public var body: [UInt8]
    }

    /// curl_global_init is not thread-safe: once, before the first handle.
    private static let initialized: Bool = curl_global_init(Int(CURL_GLOBAL_DEFAULT)) == CURLE_OK

    static func send(_ request: Request) async -> Result<Int, NotifyError> {
        await exchange(request).map(\.status)
    }

    /// The request's status and the start of its response body.
    static func exchange(_ request: Request) async -> Result<Response, NotifyError> {
        guard initialized else { return .failure(NotifyError("libcurl did not initialise")) }
        return await withCheckedContinuation { continuation in
            let rc = startDetachedThread(name: "nucleic-http") { continuation.resume(returning: perform(request)) }
            if rc != 0 { continuation.resume(returning: .failure(NotifyError("cannot start an HTTP thread (error \(rc))"))) }
        }
    }

    private static func perform(_ request: Request) -> Result<Response, NotifyError> {
        guard let curl = curl_easy_init() else { return .failure(NotifyError("curl_easy_init failed")) }
        defer { curl_easy_cleanup(curl) }
        var headers: UnsafeMutablePointer<curl_slist>?
        for h in request.headers { headers = curl_slist_append(headers, h) }
        defer { curl_slist_free_all(headers) }
        var rc = nucleic_curl_setopt_string(curl, CURLOPT_URL, request.url)
        // No signals from libcurl (its DNS timeouts would use SIGALRM in a threaded daemon).
        if rc == CURLE_OK { rc = nucleic_curl_setopt_long(curl, CURLOPT_NOSIGNAL, 1) }
        if rc == CURLE_OK { rc = nucleic_curl_setopt_long(curl, CURLOPT_TIMEOUT_MS, request.timeoutMilliseconds) }
        if rc == CURLE_OK { rc = nucleic_curl_setopt_long(curl, CURLOPT_PROTOCOLS, Int(CURLPROTO_HTTP | CURLPROTO_HTTPS)) }
        if rc == CURLE_OK { rc = nucleic_curl_setopt_slist(curl, CURLOPT_HTTPHEADER, headers) }
        let capacity = 4096
        let storage = UnsafeMutablePointer<CChar>.allocate(capacity: capacity)
        defer { storage.deallocate() }
        var buffer = nucleic_curl_buffer(data: storage, capacity: capacity, length: 0)
        if rc == CURLE_OK, request.requiresHTTP2 { rc = nucleic_curl_setopt_long(curl, CURLOPT_HTTP_VERSION, Int(CURL_HTTP_VERSION_2TLS)) }
        if rc == CURLE_OK, let caFile = request.caFile { rc = nucleic_curl_setopt_string(curl, CURLOPT_CAINFO, caFile) }
        if rc == CURLE_OK { rc = nucleic_curl_setopt_long(curl, CURLOPT_POSTFIELDSIZE, request.body.count) }
        guard rc == CURLE_OK else { return .failure(NotifyError("curl_easy_setopt: \(String(cString: curl_easy_strerror(rc)))")) }
        // POSTFIELDSIZE first: COPYPOSTFIELDS then copies that many bytes (binary-safe), so the
        // buffer need not outlive this call.
        let body = request.body.isEmpty ? [0] : request.body
        rc = body.withUnsafeBytes { nucleic_curl_setopt_pointer(curl, CURLOPT_COPYPOSTFIELDS, $0.baseAddress) }
        // The buffer's address is what libcurl writes to: it must not move while it runs.
        if rc == CURLE_OK { rc = withUnsafeMutablePointer(to: &buffer) { b in nucleic_curl_collect_body(curl, b) == CURLE_OK ? curl_easy_perform(curl) : CURLE_FAILED_INIT } }
        guard rc == CURLE_OK else { return .failure(NotifyError("POST \(request.url): \(String(cString: curl_easy_strerror(rc)))")) }
        var status = 0
        _ = nucleic_curl_getinfo_long(curl, CURLINFO_RESPONSE_CODE, &status)
        if request.requiresHTTP2 {
            var version = 0
            _ = nucleic_curl_getinfo_long(curl, CURLINFO_HTTP_VERSION, &version)
            guard version == Int(CURL_HTTP_VERSION_2_0) else { return .failure(NotifyError("POST \(request.url): the server did not speak HTTP/2")) }
        }
        let bytes = UnsafeRawBufferPointer(start: storage, count: buffer.length)
        return .success(Response(status: status, body: Array(bytes)))
    }

    /// HMAC-SHA256 of `data` under `key` (OpenSSL), as lowercase hex.
    static func hmacSHA256(key: [UInt8], data: [UInt8]) -> String {
        var out = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        _ = HMAC(EVP_sha256(), key, Int32(key.count), data, data.count, &out, &length)
        let hex = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        for b in out.prefix(Int(length)) { text += [hex[Int(b >> 4)], hex[Int(b & 0xf)]] }
        return String(decoding: text, as: UTF8.self)
    }

    /// Standard base64 (OpenSSL's EVP_EncodeBlock).
    static func base64(_ bytes: [UInt8]) -> String {
        var out = [UInt8](repeating: 0, count: (bytes.count + 2) / 3 * 4 + 1)
        let n = EVP_EncodeBlock(&out, bytes, Int32(bytes.count))
        return String(decoding: out.prefix(Int(max(0, n))), as: UTF8.self)
    }

    /// How a channel reads a status: 2xx shown, 404/410 gone (the topic or endpoint is no more).
    static func outcome(_ result: Result<Int, NotifyError>) -> Notifier.DeliveryOutcome {
        switch result {
        case .success(let status) where (200..<300).contains(status): .shown(handle: nil)
        case .success(410): .gone
        case .success(let status): .failed("HTTP \(status)")
        case .failure(let error): .failed(error.message)
        }
    }
}
