//! The `sphragis` command line: parse arguments, run, map errors to exit codes.

/// mimalloc instead of the system allocator: rendering and tokenizing views allocate
/// many small strings and vectors (per character offsets, template values), and with
/// glibc's malloc a third of `views build`'s CPU time went to allocating (issue 12).
///
/// Issue 29: with the crate's `override` feature mimalloc is the process's `malloc` too,
/// so DuckDB's C++ allocations use it (the optimizer's many small allocations took 18% of
/// `report all` under glibc's malloc), and with `no_thp` it never asks the kernel for
/// transparent huge pages: zeroing a 2 MiB page on each first touch of DuckDB's buffers
/// cost `load views` 1.2-1.7 s of system time. A/B runs on a quiet 2-core machine against
/// the binary before (glibc's malloc for DuckDB, mimalloc for Rust with huge pages and its
/// purging off): `report all` 0.97-1.07 s → 0.72-0.80 s, `refine` 0.42-0.47 s → 0.37-0.42 s,
/// `load views` of the seed pools 1.82-2.27 s → 1.73-1.82 s; views build unchanged.
/// Purging is left at mimalloc's default (issue 12 had turned it off to stop the zeroing
/// of fresh huge pages, which no longer happens): off, DuckDB's freed buffers stayed
/// with the process, and the ×4 load peaked at 1,043 MiB against 874 MiB.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    sphragis::cli::main()
}
