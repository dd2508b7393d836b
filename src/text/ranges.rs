//! `view_range` validation and clamping (seed 000 D10, DESIGN §7).
//!
//! `[start, end]` is 1-based and inclusive; `end = -1` means "to the end", and
//! `[-n, -1]` the last `n` lines (issue 14, as a `tail`). An end past
//! the last line is clamped (no error, seed D10); a start past the last line is an error,
//! since there is nothing sensible to show. One call shows at most [`MAX_VIEW_LINES`]
//! lines, so even `[1, -1]` on a huge file cannot flood the agent's context; the result
//! then says which range to ask for next.

/// Lines shown by one `view` call (seed 003: the 2000-line default).
pub const MAX_VIEW_LINES: usize = 2000;

/// A validated request, before the file's length is known.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LineRequest {
    pub start: usize,
    /// Inclusive; `None` = to the end of the file.
    pub end: Option<usize>,
    /// Whether the agent gave a range at all.
    pub explicit: bool,
    /// `[-n, -1]`: the last `n` lines, resolved by [`LineRequest::resolve_last`] once
    /// the file's line count is known.
    pub last_lines: Option<usize>,
}

impl LineRequest {
    pub const WHOLE_FILE: LineRequest = LineRequest {
        start: 1,
        end: None,
        explicit: false,
        last_lines: None,
    };

    /// The request for the last `n` lines of a file of `total` lines.
    pub fn resolve_last(self, total: usize) -> LineRequest {
        match self.last_lines {
            Some(n) => LineRequest {
                start: total.saturating_sub(n).saturating_add(1),
                last_lines: None,
                ..self
            },
            None => self,
        }
    }

    /// The lines a streaming reader must keep: `[start, last_kept]`.
    pub fn last_kept(&self) -> usize {
        let cap = self.start.saturating_add(MAX_VIEW_LINES - 1);
        match self.end {
            Some(end) => end.min(cap),
            None => cap,
        }
    }
}

/// Checks the shape of a `view_range` argument.
pub fn parse_view_range(range: Option<&[i64]>) -> Result<LineRequest, String> {
    let Some(range) = range else {
        return Ok(LineRequest::WHOLE_FILE);
    };
    let [start, end] = range else {
        return Err(format!(
            "view_range must be two integers [start, end], got {} value(s)",
            range.len()
        ));
    };
    let (start, end) = (*start, *end);
    if start < 0 {
        if end != -1 {
            return Err(format!(
                "a negative view_range start counts lines from the end and needs end -1: \
                 use [{start}, -1] for the last {} lines",
                start.unsigned_abs()
            ));
        }
        let last = usize::try_from(start.unsigned_abs())
            .map_err(|_| format!("view_range start {start} is too large"))?;
        return Ok(LineRequest {
            start: 1,
            end: None,
            explicit: true,
            last_lines: Some(last),
        });
    }
    if start < 1 {
        return Err(format!(
            "view_range start must be 1 or more (lines are numbered from 1), or negative \
             with end -1 for the last lines, got {start}"
        ));
    }
    let start =
        usize::try_from(start).map_err(|_| format!("view_range start {start} is too large"))?;
    let end = match end {
        -1 => None,
        e if e < 1 => {
            return Err(format!(
                "view_range end must be a line number or -1 (to the end), got {e}"
            ));
        }
        e => {
            let e = usize::try_from(e).map_err(|_| format!("view_range end {e} is too large"))?;
            if e < start {
                return Err(format!(
                    "view_range end {e} is before start {start}; use [{start}, -1] to read to the end"
                ));
            }
            Some(e)
        }
    };
    Ok(LineRequest {
        start,
        end,
        explicit: true,
        last_lines: None,
    })
}

/// What a view shows once the total number of lines is known.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shown {
    pub start: usize,
    /// Inclusive. `end < start` only for an empty file.
    pub end: usize,
    pub total: usize,
    /// Lines exist after `end` that the request asked for (or that a whole-file view
    /// would show) but the per-call cap left out.
    pub more_after: bool,
}

/// Clamps a request to a file of `total` lines.
pub fn clamp(req: LineRequest, total: usize) -> Result<Shown, String> {
    if total == 0 {
        if req.start == 1 {
            return Ok(Shown {
                start: 1,
                end: 0,
                total: 0,
                more_after: false,
            });
        }
        return Err(format!(
            "view_range start {} exceeds the file's 0 lines (the file is empty)",
            req.start
        ));
    }
    if req.start > total {
        return Err(format!(
            "view_range start {} exceeds the file's {total} lines",
            req.start
        ));
    }
    let wanted_end = req.end.unwrap_or(total).min(total);
    let end = wanted_end.min(req.last_kept());
    Ok(Shown {
        start: req.start,
        end,
        total,
        more_after: end < wanted_end,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn shapes() {
        assert_eq!(parse_view_range(None), Ok(LineRequest::WHOLE_FILE));
        assert_eq!(
            parse_view_range(Some(&[3, -1])),
            Ok(LineRequest {
                start: 3,
                end: None,
                explicit: true,
                last_lines: None
            })
        );
        let last = parse_view_range(Some(&[-100, -1])).unwrap();
        assert_eq!(last.last_lines, Some(100));
        assert_eq!(last.resolve_last(1000).start, 901);
        assert_eq!(last.resolve_last(30).start, 1);
        assert_eq!(last.resolve_last(0).start, 1);
        assert!(parse_view_range(Some(&[-3, 5])).is_err());
        assert!(parse_view_range(Some(&[0, 5])).is_err());
        assert!(parse_view_range(Some(&[5, 4])).is_err());
        assert!(parse_view_range(Some(&[1, -2])).is_err());
        assert!(parse_view_range(Some(&[1])).is_err());
        assert!(parse_view_range(Some(&[1, 2, 3])).is_err());
    }

    #[test]
    fn end_is_clamped_start_is_not() {
        let r = parse_view_range(Some(&[2, 100])).unwrap();
        assert_eq!(
            clamp(r, 10),
            Ok(Shown {
                start: 2,
                end: 10,
                total: 10,
                more_after: false
            })
        );
        let r = parse_view_range(Some(&[11, 12])).unwrap();
        assert!(
            clamp(r, 10)
                .unwrap_err()
                .contains("exceeds the file's 10 lines")
        );
    }

    #[test]
    fn whole_file_is_capped() {
        let s = clamp(LineRequest::WHOLE_FILE, 5000).unwrap();
        assert_eq!((s.start, s.end, s.more_after), (1, 2000, true));
    }

    proptest! {
        /// Whatever the range and the file length, a successful clamp stays inside the
        /// file, inside the request, and under the per-call cap.
        #[test]
        fn clamp_stays_in_bounds(start in -3i64..5000, end in -3i64..5000, total in 0usize..5000) {
            if let Ok(req) = parse_view_range(Some(&[start, end])) {
                match clamp(req, total) {
                    Ok(s) => {
                        prop_assert!(s.start >= 1);
                        prop_assert!(s.end <= total);
                        if total > 0 {
                            prop_assert!(s.start <= s.end);
                            prop_assert!(s.end - s.start < MAX_VIEW_LINES);
                            if let Some(e) = req.end { prop_assert!(s.end <= e); }
                        }
                        prop_assert_eq!(s.start, req.start);
                    }
                    Err(_) => prop_assert!(req.start > total),
                }
            }
        }
    }
}

/// Parses a PDF `pages` spec (`"3"`, `"1-5"`, `"1,3,7-9"`) against a document of `total`
/// pages: the 1-based pages in order, each once, at most `max` of them.
pub fn parse_pages(spec: &str, total: usize, max: usize) -> Result<Vec<usize>, String> {
    let bad = || format!("pages {spec:?} is not a page list like \"3\", \"1-5\" or \"1,3,7-9\"");
    let mut out: Vec<usize> = Vec::new();
    for part in spec.split(',') {
        let part = part.trim();
        let (from, to) = match part.split_once('-') {
            Some((a, b)) => (a.trim(), b.trim()),
            None => (part, part),
        };
        let from: usize = from.parse().map_err(|_| bad())?;
        let to: usize = to.parse().map_err(|_| bad())?;
        if from == 0 || to < from {
            return Err(bad());
        }
        if from > total {
            return Err(format!(
                "pages {spec:?}: page {from} is past the end (the document has {total} pages)"
            ));
        }
        for p in from..=to.min(total) {
            if !out.contains(&p) {
                out.push(p);
            }
            if out.len() > max {
                return Err(format!(
                    "pages {spec:?} asks for more than {max} pages; read at most {max} per call"
                ));
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod page_tests {
    use super::parse_pages;
    use proptest::prelude::*;

    #[test]
    fn page_lists() {
        assert_eq!(parse_pages("3", 5, 20), Ok(vec![3]));
        assert_eq!(parse_pages("1-3, 5", 5, 20), Ok(vec![1, 2, 3, 5]));
        assert_eq!(parse_pages("4-9", 5, 20), Ok(vec![4, 5]));
        assert_eq!(parse_pages("2,2,1-2", 5, 20), Ok(vec![2, 1]));
        for bad in ["", "0", "3-1", "a", "1-", "-2", "1;2"] {
            assert!(parse_pages(bad, 5, 20).is_err(), "{bad}");
        }
        assert!(
            parse_pages("6", 5, 20)
                .unwrap_err()
                .contains("past the end")
        );
        assert!(
            parse_pages("1-30", 40, 20)
                .unwrap_err()
                .contains("more than 20")
        );
    }

    proptest! {
        /// Whatever the spec, an accepted list names existing pages, each once, at most max.
        #[test]
        fn accepted_lists_are_in_range(spec in "[0-9, -]{0,12}", total in 0usize..50, max in 1usize..25) {
            if let Ok(pages) = parse_pages(&spec, total, max) {
                prop_assert!(pages.len() <= max);
                prop_assert!(pages.iter().all(|p| *p >= 1 && *p <= total));
                let mut seen = pages.clone();
                seen.sort_unstable();
                seen.dedup();
                prop_assert_eq!(seen.len(), pages.len());
            }
        }
    }
}
