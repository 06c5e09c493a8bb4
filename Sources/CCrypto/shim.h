#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/ec.h>
#include <openssl/ecdsa.h>
#include <openssl/kdf.h>
#include <openssl/obj_mac.h>
#include <openssl/param_build.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <stddef.h>
#include <string.h>

// Thin wrappers over OpenSSL 3 for the push channels (P-256 keys, ECDH, HKDF-SHA256,
// AES-128-GCM, ES256). Each is a fixed sequence of libcrypto calls: the macros and OSSL_PARAM
// arrays they need do not import into Swift. Every function returns 1 on success, 0 on failure
// (or the key, NULL on failure); the caller frees keys with EVP_PKEY_free.

// A new P-256 key pair.
static inline EVP_PKEY *nucleic_p256_generate(void) {
    EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new_id(EVP_PKEY_EC, NULL);
    EVP_PKEY *key = NULL;
    if (ctx && EVP_PKEY_keygen_init(ctx) > 0 && EVP_PKEY_CTX_set_ec_paramgen_curve_nid(ctx, NID_X9_62_prime256v1) > 0) {
        if (EVP_PKEY_keygen(ctx, &key) <= 0) key = NULL;
    }
    EVP_PKEY_CTX_free(ctx);
    return key;
}

// Whether `key` is an EC key on P-256.
static inline int nucleic_p256_check(const EVP_PKEY *key) {
    char group[64] = {0};
    size_t length = 0;
    if (!EVP_PKEY_is_a(key, "EC")) return 0;
    if (EVP_PKEY_get_utf8_string_param(key, OSSL_PKEY_PARAM_GROUP_NAME, group, sizeof group, &length) != 1) return 0;
    return strcmp(group, "prime256v1") == 0 || strcmp(group, "P-256") == 0;
}

// The uncompressed public point (0x04 || X || Y), 65 bytes.
static inline int nucleic_p256_public(const EVP_PKEY *key, unsigned char out[65]) {
    size_t length = 0;
    if (EVP_PKEY_get_octet_string_param(key, OSSL_PKEY_PARAM_PUB_KEY, out, 65, &length) != 1) return 0;
    return length == 65 && out[0] == 4;
}

// A P-256 key from an uncompressed public point, and the private scalar when `scalar` is not
// NULL (32 bytes, big-endian). The point is checked to lie on the curve.
static inline EVP_PKEY *nucleic_p256_from_raw(const unsigned char *point, size_t point_length, const unsigned char *scalar) {
    OSSL_PARAM_BLD *build = OSSL_PARAM_BLD_new();
    BIGNUM *d = scalar ? BN_bin2bn(scalar, 32, NULL) : NULL;
    OSSL_PARAM *params = NULL;
    EVP_PKEY_CTX *ctx = NULL;
    EVP_PKEY *key = NULL;
    if (!build || (scalar && !d)) goto done;
    if (OSSL_PARAM_BLD_push_utf8_string(build, OSSL_PKEY_PARAM_GROUP_NAME, "prime256v1", 0) != 1) goto done;
    if (OSSL_PARAM_BLD_push_octet_string(build, OSSL_PKEY_PARAM_PUB_KEY, point, point_length) != 1) goto done;
    if (d && OSSL_PARAM_BLD_push_BN(build, OSSL_PKEY_PARAM_PRIV_KEY, d) != 1) goto done;
    params = OSSL_PARAM_BLD_to_param(build);
    ctx = EVP_PKEY_CTX_new_from_name(NULL, "EC", NULL);
    if (!params || !ctx || EVP_PKEY_fromdata_init(ctx) <= 0) goto done;
    if (EVP_PKEY_fromdata(ctx, &key, d ? EVP_PKEY_KEYPAIR : EVP_PKEY_PUBLIC_KEY, params) <= 0) { key = NULL; goto done; }
    EVP_PKEY_CTX_free(ctx);
    ctx = EVP_PKEY_CTX_new(key, NULL);
    if (!ctx || EVP_PKEY_public_check(ctx) != 1) { EVP_PKEY_free(key); key = NULL; }
done:
    EVP_PKEY_CTX_free(ctx);
    OSSL_PARAM_free(params);
    OSSL_PARAM_BLD_free(build);
    BN_clear_free(d);
    return key;
}

// A private key from PEM text (PKCS#8 `BEGIN PRIVATE KEY`, or `BEGIN EC PRIVATE KEY`), unencrypted.
static inline EVP_PKEY *nucleic_pkey_from_pem(const char *pem, int length) {
    BIO *bio = BIO_new_mem_buf(pem, length);
    EVP_PKEY *key = bio ? PEM_read_bio_PrivateKey(bio, NULL, NULL, NULL) : NULL;
    BIO_free(bio);
    return key;
}

// The private key as PKCS#8 PEM into `out` (at most `capacity` bytes); its length, or 0.
static inline int nucleic_pkey_to_pem(EVP_PKEY *key, char *out, int capacity) {
    BIO *bio = BIO_new(BIO_s_mem());
    char *data = NULL;
    long length = 0;
    int result = 0;
    if (bio && PEM_write_bio_PrivateKey(bio, key, NULL, NULL, 0, NULL, NULL) == 1) {
        length = BIO_get_mem_data(bio, &data);
        if (length > 0 && length <= capacity) { memcpy(out, data, (size_t)length); result = (int)length; }
    }
    BIO_free(bio);
    return result;
}

// ECDH: the 32-byte x coordinate of `priv` times `peer`.
static inline int nucleic_ecdh(EVP_PKEY *priv, EVP_PKEY *peer, unsigned char out[32]) {
    EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new(priv, NULL);
    size_t length = 32;
    int ok = ctx && EVP_PKEY_derive_init(ctx) > 0 && EVP_PKEY_derive_set_peer(ctx, peer) > 0
        && EVP_PKEY_derive(ctx, out, &length) > 0 && length == 32;
    EVP_PKEY_CTX_free(ctx);
    return ok;
}

// HKDF-SHA256 (RFC 5869), extract and expand: `length` bytes into `out`.
static inline int nucleic_hkdf_sha256(const unsigned char *salt, int salt_length, const unsigned char *ikm, int ikm_length,
                                      const unsigned char *info, int info_length, unsigned char *out, size_t length) {
    EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new_id(EVP_PKEY_HKDF, NULL);
    size_t got = length;
    int ok = ctx && EVP_PKEY_derive_init(ctx) > 0 && EVP_PKEY_CTX_set_hkdf_md(ctx, EVP_sha256()) > 0
        && EVP_PKEY_CTX_set1_hkdf_salt(ctx, salt, salt_length) > 0 && EVP_PKEY_CTX_set1_hkdf_key(ctx, ikm, ikm_length) > 0
        && EVP_PKEY_CTX_add1_hkdf_info(ctx, info, info_length) > 0 && EVP_PKEY_derive(ctx, out, &got) > 0 && got == length;
    EVP_PKEY_CTX_free(ctx);
    return ok;
}

// AES-128-GCM with a 12-byte nonce and no associated data: `length` bytes of ciphertext, then
// the 16-byte tag, into `out` (length + 16 bytes).
static inline int nucleic_aes128gcm_seal(const unsigned char key[16], const unsigned char nonce[12], const unsigned char *in,
                                         int length, unsigned char *out) {
    EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
    int n = 0, final = 0;
    int ok = ctx && EVP_EncryptInit_ex(ctx, EVP_aes_128_gcm(), NULL, key, nonce) == 1
        && EVP_EncryptUpdate(ctx, out, &n, in, length) == 1 && EVP_EncryptFinal_ex(ctx, out + n, &final) == 1
        && n + final == length && EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_GET_TAG, 16, out + length) == 1;
    EVP_CIPHER_CTX_free(ctx);
    return ok;
}

// ES256 (RFC 7518 §3.4): ECDSA P-256 over SHA-256, the signature as r || s, 32 bytes each.
static inline int nucleic_es256_sign(EVP_PKEY *key, const unsigned char *message, size_t length, unsigned char out[64]) {
    EVP_MD_CTX *md = EVP_MD_CTX_new();
    unsigned char der[160];
    size_t der_length = sizeof der;
    int ok = 0;
    if (md && EVP_DigestSignInit(md, NULL, EVP_sha256(), NULL, key) == 1 && EVP_DigestSign(md, der, &der_length, message, length) == 1) {
        const unsigned char *p = der;
        ECDSA_SIG *signature = d2i_ECDSA_SIG(NULL, &p, (long)der_length);
        if (signature) {
            const BIGNUM *r = NULL, *s = NULL;
            ECDSA_SIG_get0(signature, &r, &s);
            ok = BN_bn2binpad(r, out, 32) == 32 && BN_bn2binpad(s, out + 32, 32) == 32;
            ECDSA_SIG_free(signature);
        }
    }
    EVP_MD_CTX_free(md);
    return ok;
}
