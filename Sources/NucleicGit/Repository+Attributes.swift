import CGit2
import Glibc

extension Repository {
    /// Whether a checkout of `tree` into a working tree of this repository can skip libgit2's
    /// checkout filters (`checkout_options.disable_filters`) and write exactly the same files.
    ///
    /// Per file, libgit2 loads the filter list, which looks up the file's attributes (a
    /// `realpath` of each folder above it and a `.gitattributes` probe in each): 40% of a
    /// 10,000-file checkout. Its filters change a file only through an attribute (`text`,
    /// `eol`, `crlf`, `ident`, `filter`) or `core.autocrlf`; Nucleic registers no filters of its
    /// own. So the filters can be skipped exactly when no attribute can be set and
    /// `core.autocrlf` is false (unset, as on Linux): no `.gitattributes` anywhere in `tree`, no
    /// `info/attributes` in the git directory, no `core.attributesFile`, and no attributes file
    /// in libgit2's system or XDG folders (`gitattributes`, `attributes`: where libgit2 looks,
    /// read from its own search paths). Anything it cannot decide counts as "filters needed".
    func checkoutNeedsNoFilters(tree: OID) -> Bool {
        checkoutNeedsNoFilters(survey: treeSurvey(tree))
    }

    /// ``checkoutNeedsNoFilters(tree:)`` from the tree's survey (nil: it could not be read).
    func checkoutNeedsNoFilters(survey: TreeSurvey?) -> Bool {
        guard let survey, !survey.hasAttributes else { return false }
        guard !FileSystem.exists(commonDirectory + "/info/attributes"), !FileSystem.exists(gitDirectory + "/info/attributes") else { return false }
        for (level, file) in [(GIT_CONFIG_LEVEL_SYSTEM, "gitattributes"), (GIT_CONFIG_LEVEL_XDG, "attributes")] {
            let buffer = GitBuffer()
            guard nucleic_git_get_search_path(level.rawValue, buffer.raw) == 0 else { git_error_clear(); return false }
            for folder in buffer.string.split(separator: ":") where FileSystem.exists(folder + "/" + file) { return false }
        }
        return configurationAllowsUnfilteredCheckout()
    }

    /// `core.autocrlf` false or unset, and no `core.attributesFile`.
    private func configurationAllowsUnfilteredCheckout() -> Bool {
        var config: OpaquePointer?
        git_error_clear()
        guard git_repository_config_snapshot(&config, pointer) == 0, let config else { git_error_clear(); return false }
        defer { git_config_free(config) }
        var autocrlf: Int32 = 0
        let rc = git_config_get_bool(&autocrlf, config, "core.autocrlf")
        git_error_clear()
        guard (rc == 0 && autocrlf == 0) || rc == GIT_ENOTFOUND.rawValue else { return false }
        var entry: UnsafeMutablePointer<git_config_entry>?
        let attributesFile = git_config_get_entry(&entry, config, "core.attributesfile")
        git_error_clear()
        if let entry { git_config_entry_free(entry) }
        return attributesFile == GIT_ENOTFOUND.rawValue
    }

    /// One walk of `tree`: whether any folder holds a `.gitattributes`, and how many files
    /// (blobs, links, submodules) lie under each top-level name. Nil when it cannot be read or a
    /// top-level name is not UTF-8.
    func treeSurvey(_ tree: OID) -> TreeSurvey? {
        var raw = tree.raw
        var object: OpaquePointer?
        git_error_clear()
        guard git_tree_lookup(&object, pointer, &raw) == 0, let object else { git_error_clear(); return nil }
        defer { git_tree_free(object) }
        let survey = TreeSurvey()
        let payload = Unmanaged.passUnretained(survey).toOpaque()
        let rc = git_tree_walk(object, GIT_TREEWALK_PRE, { root, entry, payload in
            guard let entry, let name = git_tree_entry_name(entry), let root, let payload else { return -1 }
            let survey = Unmanaged<TreeSurvey>.fromOpaque(payload).takeUnretainedValue()
            if strcmp(name, ".gitattributes") == 0 { survey.hasAttributes = true }
            if root.pointee == 0 {
                guard let top = String(validatingCString: name) else { return -1 }
                survey.current = top
                if git_tree_entry_type(entry) != GIT_OBJECT_TREE { survey.files[top, default: 0] += 1 }
            } else if git_tree_entry_type(entry) != GIT_OBJECT_TREE {
                survey.files[survey.current, default: 0] += 1
            }
            return 0
        }, payload)
        git_error_clear()
        return rc == 0 ? survey : nil
    }
}

/// What ``Repository/treeSurvey(_:)`` found.
final class TreeSurvey {
    var hasAttributes = false
    /// Files under each top-level name (a top-level file counts 1).
    var files: [String: Int] = [:]
    fileprivate var current = ""
}
