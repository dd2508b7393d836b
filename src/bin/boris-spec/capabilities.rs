//! `boris-spec capabilities`: what portable cases use, and the built-in adapters.

use std::io::Write as _;
use std::process::ExitCode;

use boris::spec::vocabulary::Capability;

pub(crate) fn main() -> ExitCode {
    let width = Capability::all().map(|c| c.name().len()).max().unwrap_or(0);
    let mut text = String::new();
    for cap in Capability::all() {
        text.push_str(&format!("{:width$}  {}\n", cap.name(), cap.values()));
    }
    text.push_str(&format!(
        "\nbuilt-in adapters: {}\n",
        boris::spec::adapter::builtin_names().join(", ")
    ));
    // A reader that stops early (`| head`) is not an error.
    let _ = std::io::stdout().lock().write_all(text.as_bytes());
    ExitCode::SUCCESS
}
