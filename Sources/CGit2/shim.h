#include <git2.h>

/* git_libgit2_opts is variadic, which Swift cannot call: one fixed-signature wrapper per use. */

/* An option that takes one int (GIT_OPT_ENABLE_STRICT_HASH_VERIFICATION and the like). */
static inline int nucleic_git_set_int_option(int option, int value) {
    return git_libgit2_opts(option, value);
}

/* GIT_OPT_GET_SEARCH_PATH: the folders libgit2 searches for `level`'s files, ':'-separated. */
static inline int nucleic_git_get_search_path(int level, git_buf *out) {
    return git_libgit2_opts(GIT_OPT_GET_SEARCH_PATH, level, out);
}
