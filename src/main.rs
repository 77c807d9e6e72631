//! The `sphragis` command line: parse arguments, run, map errors to exit codes.

/// mimalloc instead of the system allocator: rendering and tokenizing views allocate
/// many small strings and vectors (per character offsets, template values), and with
/// glibc's malloc a third of `views build`'s CPU time went to allocating (issue 12).
/// DuckDB's own C++ allocations are not affected.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    sphragis::cli::main()
}
