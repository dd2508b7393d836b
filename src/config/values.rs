//! Pure parsers of flag values: sizes, seconds, `--task-after`, comma-separated env
//! lists, whether a host is loopback.

use std::net::IpAddr;
use std::time::Duration;

/// Whether `host` (a bind address or name) is loopback only.
pub fn is_loopback(host: &str) -> bool {
    host == "localhost"
        || host
            .trim_matches(|c| c == '[' || c == ']')
            .parse::<IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

/// Splits a comma-separated env list. Commas inside `{…}` (glob alternations) do not
/// split; surrounding whitespace is trimmed and empty items dropped.
pub fn split_env_list(value: &str) -> Vec<String> {
    let mut items = Vec::new();
    let mut depth = 0usize;
    let mut current = String::new();
    for ch in value.chars() {
        match ch {
            '{' => {
                depth += 1;
                current.push(ch);
            }
            '}' => {
                depth = depth.saturating_sub(1);
                current.push(ch);
            }
            ',' if depth == 0 => items.push(std::mem::take(&mut current)),
            _ => current.push(ch),
        }
    }
    items.push(current);
    items
        .into_iter()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .collect()
}

/// Parses `10MB`, `512KB`, `1GB` (binary multiples, case-insensitive) or plain bytes.
pub fn parse_size(value: &str) -> Result<u64, String> {
    let v = value.trim();
    let upper = v.to_ascii_uppercase();
    let (digits, unit) = match upper.find(|c: char| !c.is_ascii_digit()) {
        Some(at) => (&upper[..at], &upper[at..]),
        None => (upper.as_str(), ""),
    };
    let multiplier: u64 = match unit {
        "" | "B" => 1,
        "KB" => 1 << 10,
        "MB" => 1 << 20,
        "GB" => 1 << 30,
        _ => return Err(size_error(value)),
    };
    let n: u64 = digits.parse().map_err(|_| size_error(value))?;
    let bytes = n.checked_mul(multiplier).ok_or_else(|| size_error(value))?;
    if bytes == 0 {
        return Err(format!("{value:?} is zero; the size must be positive"));
    }
    Ok(bytes)
}

fn size_error(value: &str) -> String {
    format!("{value:?} is not a size; use plain bytes or a number with KB, MB or GB (e.g. 10MB)")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_names() {
        assert!(is_loopback("127.0.0.1"));
        assert!(is_loopback("127.1.2.3"));
        assert!(is_loopback("::1"));
        assert!(is_loopback("[::1]"));
        assert!(is_loopback("localhost"));
        assert!(!is_loopback("0.0.0.0"));
        assert!(!is_loopback("10.1.2.3"));
        assert!(!is_loopback("boris.internal"));
    }

    #[test]
    fn env_lists_split_outside_braces_only() {
        assert_eq!(split_env_list("/src,/tests"), vec!["/src", "/tests"]);
        assert_eq!(
            split_env_list("*.{pem,key}, .env ,,"),
            vec!["*.{pem,key}", ".env"]
        );
        assert!(split_env_list("").is_empty());
    }

    #[test]
    fn task_after_values() {
        let secs = |s: f64| Ok(TaskAfter(Some(Duration::from_secs_f64(s))));
        assert_eq!(parse_task_after("1"), secs(1.0));
        assert_eq!(parse_task_after("0"), secs(0.0));
        assert_eq!(parse_task_after(" 2.5 "), secs(2.5));
        assert_eq!(parse_task_after("OFF"), Ok(TaskAfter(None)));
        for bad in ["", "-1", "soon", "NaN", "inf", "86401"] {
            assert!(parse_task_after(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn sizes() {
        assert_eq!(parse_size("10MB"), Ok(10 << 20));
        assert_eq!(parse_size("512kb"), Ok(512 << 10));
        assert_eq!(parse_size("1GB"), Ok(1 << 30));
        assert_eq!(parse_size("4096"), Ok(4096));
        assert!(parse_size("10 MB").is_err());
        assert!(parse_size("ten").is_err());
        assert!(parse_size("10TB").is_err());
        assert!(parse_size("0").is_err());
        assert!(parse_size("99999999999999999999GB").is_err());
    }

    proptest::proptest! {
        #[test]
        fn splitting_never_loses_a_brace_group(items in proptest::collection::vec("[a-z.*]{1,6}(\\{[a-z]{1,3},[a-z]{1,3}\\})?", 1..6)) {
            let joined = items.join(",");
            proptest::prop_assert_eq!(split_env_list(&joined), items);
        }
    }
}

/// Parses a number of seconds (decimals allowed, at most an hour).
pub fn parse_seconds(value: &str) -> Result<Duration, String> {
    match value.trim().parse::<f64>() {
        Ok(secs) if secs.is_finite() && (0.0..=3600.0).contains(&secs) => {
            Ok(Duration::from_secs_f64(secs))
        }
        _ => Err(format!(
            "{value:?} is not a number of seconds (0 to 3600, decimals allowed)"
        )),
    }
}

/// `--task-after`: a delay, or `None` for `off`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TaskAfter(pub Option<Duration>);

/// Parses `--task-after`: seconds (decimals allowed, at most a day) or `off`.
pub fn parse_task_after(value: &str) -> Result<TaskAfter, String> {
    let v = value.trim();
    if v.eq_ignore_ascii_case("off") {
        return Ok(TaskAfter(None));
    }
    match v.parse::<f64>() {
        Ok(secs) if secs.is_finite() && (0.0..=86_400.0).contains(&secs) => {
            Ok(TaskAfter(Some(Duration::from_secs_f64(secs))))
        }
        _ => Err(format!(
            "{value:?} is not a number of seconds (0 to 86400, decimals allowed) or off"
        )),
    }
}
