//! The `dedupsim` command line: parses flags, resolves them into library
//! calls, prints or writes results. All simulation logic lives in the library.

mod cli;

use std::process::ExitCode;

fn main() -> ExitCode {
    cli::main()
}
