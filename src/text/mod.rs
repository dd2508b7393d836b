//! Pure text logic, apart from all I/O so that each piece can be property-tested and
//! fuzzed on its own: view ranges, line scanning and truncation, line numbering.

pub mod diff;
pub mod indent_block;
pub mod line_index;
pub mod lines;
pub mod notebook;
pub mod patch;
pub mod quote;
pub mod ranges;
pub mod replace;
pub mod sanitize;
pub mod sentinel;
pub mod snippet;
pub mod truncate;
pub mod unified_exec;

/// The `file://` URI of an absolute path: every byte but the unreserved ones and `/`
/// percent-encoded (RFC 3986), so any file name round-trips through [`file_uri_path`].
pub fn file_uri(path: &std::path::Path) -> String {
    use std::os::unix::ffi::OsStrExt;
    let mut out = String::from("file://");
    for &b in path.as_os_str().as_bytes() {
        if b.is_ascii_alphanumeric() || b"-._~/".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// The path of a `file://` URI with an empty or `localhost` host; `None` for anything
/// else (another scheme or host, a relative path, a bad escape).
pub fn file_uri_path(uri: &str) -> Option<std::path::PathBuf> {
    use std::os::unix::ffi::OsStringExt;
    let rest = uri.strip_prefix("file://")?;
    let rest = rest.strip_prefix("localhost").unwrap_or(rest);
    if !rest.starts_with('/') {
        return None;
    }
    let bytes = rest.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = std::str::from_utf8(bytes.get(i + 1..i + 3)?).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    Some(std::path::PathBuf::from(std::ffi::OsString::from_vec(out)))
}

#[cfg(test)]
mod uri_tests {
    use super::*;
    use std::os::unix::ffi::OsStringExt;

    proptest::proptest! {
        /// Any absolute path round-trips through a file URI.
        #[test]
        fn file_uris_round_trip(bytes in proptest::collection::vec(1u8..=255, 0..60)) {
            let mut raw = vec![b'/'];
            raw.extend(bytes);
            let path = std::path::PathBuf::from(std::ffi::OsString::from_vec(raw));
            let uri = file_uri(&path);
            proptest::prop_assert!(uri.is_ascii());
            proptest::prop_assert_eq!(file_uri_path(&uri), Some(path));
        }
    }

    #[test]
    fn foreign_uris_are_refused() {
        assert_eq!(file_uri_path("file:///tmp/a%20b"), Some("/tmp/a b".into()));
        assert_eq!(file_uri_path("file://localhost/x"), Some("/x".into()));
        assert_eq!(file_uri_path("file://evil/x"), None);
        assert_eq!(file_uri_path("http:///x"), None);
        assert_eq!(file_uri_path("file:///x%2"), None);
    }
}
