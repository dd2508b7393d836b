//! `boris-spec check`: load and validate case files, no server.

use std::process::ExitCode;

use super::SuiteArgs;

pub(crate) fn main(suite: &SuiteArgs) -> ExitCode {
    let files = match suite.cases() {
        Ok(p) => p,
        Err(e) => {
            eprintln!("boris-spec: {e}");
            return ExitCode::from(2);
        }
    };
    let mut bad = 0;
    for f in &files {
        if let Err(e) = f.load() {
            bad += 1;
            println!("INVALID {}: {e}", f.path.display());
        }
    }
    println!("{} valid, {bad} invalid", files.len() - bad);
    if bad > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}
