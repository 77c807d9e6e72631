//! The `sphragis` command line: parse arguments, run, map errors to exit codes.
fn main() -> std::process::ExitCode {
    sphragis::cli::main()
}
