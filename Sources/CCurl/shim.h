#include <curl/curl.h>
#include <stddef.h>

// curl_easy_setopt and curl_easy_getinfo are variadic, which Swift cannot call: one typed
// wrapper per argument kind.
static inline CURLcode nucleic_curl_setopt_long(CURL *curl, CURLoption option, long value) {
    return curl_easy_setopt(curl, option, value);
}
static inline CURLcode nucleic_curl_setopt_string(CURL *curl, CURLoption option, const char *value) {
    return curl_easy_setopt(curl, option, value);
}
static inline CURLcode nucleic_curl_setopt_slist(CURL *curl, CURLoption option, struct curl_slist *value) {
    return curl_easy_setopt(curl, option, value);
}
static inline CURLcode nucleic_curl_getinfo_long(CURL *curl, CURLINFO info, long *value) {
    return curl_easy_getinfo(curl, info, value);
}
static size_t nucleic_curl_discard(char *data, size_t size, size_t count, void *context) {
    (void)data; (void)context;
    return size * count;
}
// Responses are not read: their bodies are dropped instead of going to stdout.
static inline CURLcode nucleic_curl_discard_body(CURL *curl) {
    return curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, nucleic_curl_discard);
}
static inline CURLcode nucleic_curl_setopt_pointer(CURL *curl, CURLoption option, const void *value) {
    return curl_easy_setopt(curl, option, value);
}

// A response body kept up to a fixed size (APNs says why it refused in a small JSON body); what
// is past `capacity` is dropped, not an error.
struct nucleic_curl_buffer {
    char *data;
    size_t capacity;
    size_t length;
};
static size_t nucleic_curl_collect(char *data, size_t size, size_t count, void *context) {
    struct nucleic_curl_buffer *buffer = (struct nucleic_curl_buffer *)context;
    size_t n = size * count;
    size_t room = buffer->capacity - buffer->length;
    size_t take = n < room ? n : room;
    for (size_t i = 0; i < take; i++) buffer->data[buffer->length + i] = data[i];
    buffer->length += take;
    return n;
}
static inline CURLcode nucleic_curl_collect_body(CURL *curl, struct nucleic_curl_buffer *buffer) {
    CURLcode rc = curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, nucleic_curl_collect);
    if (rc == CURLE_OK) rc = curl_easy_setopt(curl, CURLOPT_WRITEDATA, (void *)buffer);
    return rc;
}
