//! Fixtures (`files:`, the `write:` step) and file checks (`check_files:`).

use std::path::Path;

use base64::Engine as _;
use serde::Deserialize;

use super::*;

// ---------------------------------------------------------------------------------
// Fixtures

/// A file to create in the workdir (`files:` and `write:`).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(try_from = "RawFileSpec")]
pub struct FileSpec {
    pub path: String,
    pub content: FileContent,
    /// Permission bits, parsed from an octal string.
    pub mode: Option<u32>,
    /// Modification time, seconds since the Unix epoch.
    pub mtime: Option<i64>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FileContent {
    Text(String),
    Bytes(Vec<u8>),
    Repeat { text: String, count: u64 },
    Symlink(String),
    Dir,
    Fifo,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Repeat {
    pub text: String,
    pub count: u64,
}

impl PartialEq for Repeat {
    fn eq(&self, o: &Self) -> bool {
        self.text == o.text && self.count == o.count
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawFileSpec {
    path: String,
    text: Option<String>,
    base64: Option<String>,
    repeat: Option<Repeat>,
    symlink: Option<String>,
    #[serde(default)]
    dir: bool,
    #[serde(default)]
    fifo: bool,
    mode: Option<String>,
    mtime: Option<i64>,
}

impl TryFrom<RawFileSpec> for FileSpec {
    type Error = String;
    fn try_from(r: RawFileSpec) -> Result<Self, String> {
        check_rel_path(&r.path)?;
        let mut kinds = Vec::new();
        if r.text.is_some() {
            kinds.push("text");
        }
        if r.base64.is_some() {
            kinds.push("base64");
        }
        if r.repeat.is_some() {
            kinds.push("repeat");
        }
        if r.symlink.is_some() {
            kinds.push("symlink");
        }
        if r.dir {
            kinds.push("dir");
        }
        if r.fifo {
            kinds.push("fifo");
        }
        if kinds.len() != 1 {
            return Err(format!(
                "file `{}` needs exactly one of text, base64, repeat, symlink, dir, fifo (found {})",
                r.path,
                if kinds.is_empty() {
                    "none".to_string()
                } else {
                    kinds.join(", ")
                }
            ));
        }
        let content = if let Some(t) = r.text {
            FileContent::Text(t)
        } else if let Some(b) = r.base64 {
            FileContent::Bytes(decode_base64(&b).map_err(|e| format!("file `{}`: {e}", r.path))?)
        } else if let Some(rep) = r.repeat {
            FileContent::Repeat {
                text: rep.text,
                count: rep.count,
            }
        } else if let Some(s) = r.symlink {
            FileContent::Symlink(s)
        } else if r.dir {
            FileContent::Dir
        } else {
            FileContent::Fifo
        };
        let mode = match r.mode {
            Some(m) => Some(parse_mode(&m).map_err(|e| format!("file `{}`: {e}", r.path))?),
            None => None,
        };
        if matches!(content, FileContent::Symlink(_)) && (mode.is_some() || r.mtime.is_some()) {
            return Err(format!(
                "file `{}`: mode and mtime cannot be set on a symlink",
                r.path
            ));
        }
        Ok(FileSpec {
            path: r.path,
            content,
            mode,
            mtime: r.mtime,
        })
    }
}

pub fn decode_base64(s: &str) -> Result<Vec<u8>, String> {
    let compact: String = s.chars().filter(|c| !c.is_whitespace()).collect();
    base64::engine::general_purpose::STANDARD
        .decode(compact.as_bytes())
        .map_err(|e| format!("invalid base64: {e}"))
}

/// Parses an octal permission string such as `"0755"`, `"644"` or `"0o600"`.
pub fn parse_mode(s: &str) -> Result<u32, String> {
    let digits = s.strip_prefix("0o").unwrap_or(s);
    match u32::from_str_radix(digits, 8) {
        Ok(m) if m <= 0o7777 && !digits.is_empty() => Ok(m),
        _ => Err(format!(
            "mode `{s}` is not an octal permission string like \"0755\""
        )),
    }
}

/// Fixture and check paths are relative to the workdir (or absolute under `{workdir}`,
/// checked after expansion) and may not climb out of it with `..`.
pub(crate) fn check_rel_path(p: &str) -> Result<(), String> {
    if p.is_empty() {
        return Err("empty path".into());
    }
    if Path::new(p)
        .components()
        .any(|c| matches!(c, std::path::Component::ParentDir))
    {
        return Err(format!("path `{p}` must not contain `..`"));
    }
    Ok(())
}

// ---------------------------------------------------------------------------------
// File checks

#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileCheck {
    pub path: String,
    /// Exact content (text).
    pub text: Option<String>,
    /// Exact content (bytes, base64).
    pub base64: Option<String>,
    #[serde(default)]
    pub contains: Strings,
    #[serde(default)]
    pub not_contains: Strings,
    /// `false`: the path must not exist (not even as a dangling symlink).
    pub exists: Option<bool>,
    /// Permission bits (octal string).
    pub mode: Option<String>,
    /// The path is a symlink with this target.
    pub symlink: Option<String>,
    /// The path is (`true`) or is not (`false`) a directory.
    pub dir: Option<bool>,
}

impl FileCheck {
    pub(crate) fn validate(&self) -> Result<(), String> {
        check_rel_path(&self.path)?;
        if self.exists == Some(false)
            && (self.text.is_some()
                || self.base64.is_some()
                || !self.contains.is_empty()
                || !self.not_contains.is_empty()
                || self.mode.is_some()
                || self.symlink.is_some()
                || self.dir.is_some())
        {
            return Err(format!(
                "check `{}`: exists: false cannot be combined with other assertions",
                self.path
            ));
        }
        if let Some(m) = &self.mode {
            parse_mode(m).map_err(|e| format!("check `{}`: {e}", self.path))?;
        }
        if let Some(b) = &self.base64 {
            decode_base64(b).map_err(|e| format!("check `{}`: {e}", self.path))?;
        }
        Ok(())
    }
}
