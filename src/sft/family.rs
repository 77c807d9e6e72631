//! Repository families (SPEC §3.1 "protected family list", §3.4 isolation): which
//! repository an instance comes from, so a held-out benchmark's repositories can be
//! checked against training.
//!
//! A family comes from the data where the format has it, else from the instance id's
//! scheme; an instance whose family cannot be determined keeps `None`, and the isolation
//! view shows it as `(undetermined)` with `protected` unknown — never as unprotected.
//!
//! | source | example | family |
//! |---|---|---|
//! | a `repo` field `owner/name` (SWE-bench task rows; [`family_from_repo`]) | `django/django` | `django__django` |
//! | SWE-smith id `<owner>__<repo>.<commit>.<suffix>` (commit: 7-40 hex digits) | `arrow-py__arrow.1d70d009.lm_rewrite__nuzjfyur` | `arrow-py__arrow` |
//! | SWE-bench id `<owner>__<repo>-<number>`, optionally `_<k>` (a sample suffix the ADP extraction appends) | `django__django-13513`, `python__mypy-15976_0` | `django__django`, `python__mypy` |
//! | anything else | `inst7`, `chat:0` | `None` (undetermined) |

/// The family named by a `repo` field: `owner/name` → `owner__name` (SWE-bench's own
/// spelling of a family in instance ids). `None` for a value without exactly one `/`.
pub fn family_from_repo(repo: &str) -> Option<String> {
    let (owner, name) = repo.trim().split_once('/')?;
    (!owner.is_empty() && !name.is_empty() && !name.contains('/')).then(|| format!("{owner}__{name}"))
}

/// The family of an instance id by its scheme (SWE-smith, then SWE-bench; see the module
/// table); `None` when no scheme matches.
pub fn family_of(instance_id: &str) -> Option<String> {
    swe_smith_family(instance_id).or_else(|| swe_bench_family(instance_id))
}

/// SWE-smith: the dot-separated segments before the first segment of 7-40 hex digits,
/// when they hold a `__` (repository names may themselves contain dots).
fn swe_smith_family(instance_id: &str) -> Option<String> {
    let segments: Vec<&str> = instance_id.split('.').collect();
    let commit = segments
        .iter()
        .skip(1)
        .position(|s| (7..=40).contains(&s.len()) && s.chars().all(|c| c.is_ascii_hexdigit()))?
        + 1;
    let family = segments[..commit].join(".");
    family.contains("__").then_some(family)
}

/// SWE-bench: the part before the last `-<number>` (an `_<k>` after the number ignored).
fn swe_bench_family(instance_id: &str) -> Option<String> {
    let (head, tail) = instance_id.rsplit_once('-')?;
    let tail = tail.split('_').next().unwrap_or(tail);
    (!head.is_empty() && !tail.is_empty() && tail.chars().all(|c| c.is_ascii_digit())).then(|| head.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn family_by_id_scheme() {
        assert_eq!(family_of("django__django-13513").as_deref(), Some("django__django"));
        assert_eq!(family_of("python__mypy-15976_0").as_deref(), Some("python__mypy"));
        assert_eq!(family_of("tomerfiliba__plumbum-366_17").as_deref(), Some("tomerfiliba__plumbum"));
        // SWE-smith ids (real ones from the shared sample)
        assert_eq!(family_of("arrow-py__arrow.1d70d009.lm_rewrite__nuzjfyur").as_deref(), Some("arrow-py__arrow"));
        assert_eq!(family_of("getmoto__moto.694ce1f4.pr_5072").as_deref(), Some("getmoto__moto"));
        // a repository name with a dot; a suffix that ends in -<number> does not fool it
        assert_eq!(family_of("owner__repo.js.abcdef1.func_pm_op__x-3").as_deref(), Some("owner__repo.js"));
        // undetermined
        assert_eq!(family_of("inst7"), None);
        assert_eq!(family_of("chat:0"), None);
        assert_eq!(family_of("notes.abcdef1.x"), None, "no owner__repo before the commit");
        assert_eq!(family_of("-12"), None);
    }

    #[test]
    fn family_from_a_repo_field() {
        assert_eq!(family_from_repo("django/django").as_deref(), Some("django__django"));
        assert_eq!(family_from_repo(" astropy/astropy ").as_deref(), Some("astropy__astropy"));
        assert_eq!(family_from_repo("django"), None);
        assert_eq!(family_from_repo("a/b/c"), None);
        assert_eq!(family_from_repo("/b"), None);
    }
}
