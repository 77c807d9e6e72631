//! The `sphragis` command line: parse arguments, run, map errors to exit codes.

/// mimalloc instead of the system allocator: rendering and tokenizing views allocate
/// many small strings and vectors (per character offsets, template values), and with
/// glibc's malloc a third of `views build`'s CPU time went to allocating (issue 12).
/// libmimalloc-sys's `override` feature makes it the process's `malloc` too, so DuckDB's
/// C++ allocations use it (issue 29: the optimizer's many small allocations took 18% of
/// `report all`; with mimalloc `report all` takes 22% less time and `refine` 12% less).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// mimalloc's `mi_option_purge_delay`: its index in `mi_option_e` (mimalloc.h, the same
/// in mimalloc v2 and v3; libmimalloc-sys names no constant for it). Its default is
/// 1000 (milliseconds) in mimalloc v3, the version linked (options.c), 10 in v2.
const MI_OPTION_PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;

/// Keeps memory the process frees for its own reuse instead of returning it to the
/// operating system a second later (issue 12). `views build` allocates and frees buffers of
/// several MB per trajectory (the tokenizer's per-byte alignments): returned each time,
/// the kernel zeroed fresh huge pages again for the next one, 0.6-0.9 s of system time of
/// a 2 s build. Peak memory rises by 10-40 MiB. Left alone when the user sets
/// `MIMALLOC_PURGE_DELAY`, or when the option does not hold its default (an index that
/// moved in another mimalloc).
fn keep_freed_memory() {
    // SAFETY: mimalloc's option getter and setter take a plain integer and may be called
    // at any time from any thread.
    unsafe {
        if std::env::var_os("MIMALLOC_PURGE_DELAY").is_none()
            && matches!(libmimalloc_sys::mi_option_get(MI_OPTION_PURGE_DELAY), 10 | 1000)
        {
            libmimalloc_sys::mi_option_set(MI_OPTION_PURGE_DELAY, -1);
        }
    }
}

/// Turns transparent huge pages off for this process (`prctl(PR_SET_THP_DISABLE)`), as
/// `MIMALLOC_ALLOW_THP=0` would (issue 29). mimalloc asks the kernel for huge pages for its
/// arenas (`madvise(MADV_HUGEPAGE)`), and since it serves DuckDB's buffers too, each fault
/// zeroed a 2 MiB page ahead of use: `load views` of the seed pools spent 1.2-1.7 s of
/// system time against 0.4 s without huge pages (A/B runs: 2.4-2.9 s against 1.7-1.8 s
/// wall). glibc's malloc, used before, never asked for huge pages. A kernel without the
/// call leaves things as they were.
fn no_huge_pages() {
    // SAFETY: prctl with PR_SET_THP_DISABLE takes plain integers and changes a flag of
    // this process only.
    unsafe {
        libc::prctl(libc::PR_SET_THP_DISABLE, 1, 0, 0, 0);
    }
}

fn main() -> std::process::ExitCode {
    no_huge_pages();
    keep_freed_memory();
    sphragis::cli::main()
}

#[cfg(test)]
mod tests {
    /// The index taken for `mi_option_purge_delay` holds that option's default in the
    /// linked mimalloc (v3: 1000 ms), and the setter changes it.
    #[test]
    fn purge_delay_index_is_mimallocs_purge_delay() {
        if std::env::var_os("MIMALLOC_PURGE_DELAY").is_some() {
            panic!("unset MIMALLOC_PURGE_DELAY to run this test: it checks mimalloc's default");
        }
        // SAFETY: as in keep_freed_memory
        unsafe {
            assert_eq!(libmimalloc_sys::mi_option_get(super::MI_OPTION_PURGE_DELAY), 1000);
        }
        super::keep_freed_memory();
        // SAFETY: as above
        unsafe {
            assert_eq!(libmimalloc_sys::mi_option_get(super::MI_OPTION_PURGE_DELAY), -1);
        }
    }

    /// After `no_huge_pages` the kernel reports huge pages off for the process.
    #[test]
    fn huge_pages_are_off_after_no_huge_pages() {
        super::no_huge_pages();
        // SAFETY: PR_GET_THP_DISABLE reads a flag of this process
        let off = unsafe { libc::prctl(libc::PR_GET_THP_DISABLE, 0, 0, 0, 0) };
        assert_eq!(off, 1);
    }
}
