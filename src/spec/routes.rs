//! One case, every transport (issue 13 §2): a stdio case is also run over streamable
//! HTTP, and under the 2026-07-28 stateless revision as well as the 2025-11-25
//! `initialize` one, by rewriting its steps. A route is a transport and an era:
//!
//! | route       | transport | era        | how the case's requests are sent |
//! | ----------- | --------- | ---------- | -------------------------------- |
//! | `stdio`     | stdio     | 2025-11-25 | as written: initialize, then the steps |
//! | `stdio-2026`| stdio     | 2026-07-28 | no initialize; each request carries the protocol version and client capabilities in `_meta` |
//! | `http`      | HTTP      | 2025-11-25 | `http_initialize`, then each request in that session |
//! | `http-2026` | HTTP      | 2026-07-28 | each request stateless (`_meta`, `Mcp-Method`, `Mcp-Name`) |
//!
//! A case goes on the other routes only when nothing in it is about the transport: a
//! stdio case with the default handshake whose steps are requests awaited in turn
//! (`do`, `call`, `request`) and checks on the side (`write`, `sleep_ms`,
//! `check_files`, `assert_no_process`). Raw lines, concurrent requests, signals, an
//! explicit `initialize`, startup failures and exit codes are the transport's own
//! behaviour and stay on stdio; so does a case tagged `stdio-only`. Goldens are stdio
//! transcripts, compared on the `stdio` route only.

use serde_json::{Map, Value};

use super::model::{
    Action, Case, CaseTransport, HttpCallSpec, HttpInitSpec, HttpRequestSpec, Step,
};
use super::protocol::{NOT_STATELESS, SESSION_ERA, STATELESS_ERA, stateless_meta};

/// The tag that keeps a case on its own transport (e.g. it passes `BORIS_TOKEN` in the
/// server's environment, which over HTTP would demand a bearer token).
pub const STDIO_ONLY_TAG: &str = "stdio-only";

/// The tags of the cases whose seconds go to the engine behind the transport, not to the
/// transport: `timing` (the case waits on the server's clocks: timeouts, grace periods,
/// deadlines, the racy window) and `lsp` (it starts a language server, seconds of CPU
/// each). Such a case runs on the fewest of the selected routes that still put it on
/// every selected transport and under every selected era ([`covering`]), not on their
/// every combination, unless the run asks for every route (`--every-route`; DEC-113).
pub const COVERED_TAGS: [&str; 2] = ["timing", "lsp"];

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Route {
    Stdio,
    StdioStateless,
    Http,
    HttpStateless,
}

impl Route {
    pub const ALL: [Route; 4] = [
        Route::Stdio,
        Route::StdioStateless,
        Route::Http,
        Route::HttpStateless,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Route::Stdio => "stdio",
            Route::StdioStateless => "stdio-2026",
            Route::Http => "http",
            Route::HttpStateless => "http-2026",
        }
    }

    pub fn transport(self) -> &'static str {
        match self {
            Route::Stdio | Route::StdioStateless => "stdio",
            Route::Http | Route::HttpStateless => "http",
        }
    }

    pub fn era(self) -> &'static str {
        match self {
            Route::Stdio | Route::Http => SESSION_ERA,
            Route::StdioStateless | Route::HttpStateless => STATELESS_ERA,
        }
    }

    /// The routes with one of `transports` and one of `eras` (`all` matches any).
    pub fn select(transports: &[String], eras: &[String]) -> Result<Vec<Route>, String> {
        for t in transports {
            if !["stdio", "http", "all"].contains(&t.as_str()) {
                return Err(format!("unknown transport `{t}` (stdio, http or all)"));
            }
        }
        for e in eras {
            if ![SESSION_ERA, STATELESS_ERA, "all"].contains(&e.as_str()) {
                return Err(format!(
                    "unknown era `{e}` ({SESSION_ERA}, {STATELESS_ERA} or all)"
                ));
            }
        }
        let any = |list: &[String], v: &str| list.iter().any(|x| x == "all" || x == v);
        Ok(Route::ALL
            .into_iter()
            .filter(|r| any(transports, r.transport()) && any(eras, r.era()))
            .collect())
    }
}

/// The fewest of `routes` that between them have each transport and each era of
/// `routes`; among covers of one size, the first in the order stdio, http-2026,
/// stdio-2026, http (so all four give stdio on the session era and HTTP stateless).
pub fn covering(routes: &[Route]) -> Vec<Route> {
    const PREFERENCE: [Route; 4] = [
        Route::Stdio,
        Route::HttpStateless,
        Route::StdioStateless,
        Route::Http,
    ];
    let have: Vec<Route> = PREFERENCE
        .into_iter()
        .filter(|r| routes.contains(r))
        .collect();
    let covers = |pick: &[Route]| {
        have.iter().all(|r| {
            pick.iter().any(|p| p.transport() == r.transport())
                && pick.iter().any(|p| p.era() == r.era())
        })
    };
    // Subsets as index lists into `have` (which is in preference order), by size and then
    // lexicographically: at most 16 of them. The whole of `have` covers itself.
    let n = have.len();
    let mut subsets: Vec<Vec<usize>> = (0u32..1 << n)
        .map(|mask| (0..n).filter(|i| mask & (1 << i) != 0).collect())
        .collect();
    subsets.sort_by(|a, b| (a.len(), a).cmp(&(b.len(), b)));
    subsets
        .into_iter()
        .map(|s| s.into_iter().map(|i| have[i]).collect::<Vec<Route>>())
        .find(|s| covers(s))
        .unwrap_or(have)
}

/// Whether `case` runs on `route` when `selected` are the run's routes: a case with one
/// of the [`COVERED_TAGS`] only on the cover of the routes it can take ([`covering`]);
/// any other case on each of them.
pub fn covered_case_runs_on(case: &Case, route: Route, selected: &[Route]) -> bool {
    if !case.tags.iter().any(|t| COVERED_TAGS.contains(&t.as_str())) {
        return true;
    }
    let possible: Vec<Route> = selected
        .iter()
        .copied()
        .filter(|r| for_route(case, *r).is_ok())
        .collect();
    covering(&possible).contains(&route)
}

/// The case as `route` runs it, or why it stays off that route.
pub fn for_route(case: &Case, route: Route) -> Result<Case, String> {
    if route == Route::Stdio {
        return Ok(case.clone());
    }
    portable_across_transports(case)?;
    let stateless = matches!(route, Route::StdioStateless | Route::HttpStateless);
    if stateless
        && let Some(m) = case.steps.iter().find_map(|s| match &s.action {
            Action::Request { method, .. } if NOT_STATELESS.contains(&method.as_str()) => {
                Some(method)
            }
            _ => None,
        })
    {
        return Err(format!("`{m}` is not in the {STATELESS_ERA} revision"));
    }
    let mut out = case.clone();
    out.golden = false;
    let mut steps = Vec::with_capacity(case.steps.len() + 1);
    match route {
        Route::StdioStateless => out.handshake = false,
        Route::Http => {
            out.transport = CaseTransport::Http;
            steps.push(Step {
                action: Action::HttpInitialize(HttpInitSpec::default()),
                expect: None,
                profiles: Default::default(),
                timeout_ms: None,
                until_ms: None,
                shows_marker: false,
            });
        }
        Route::HttpStateless => out.transport = CaseTransport::Http,
        Route::Stdio => {}
    }
    for step in &case.steps {
        let mut step = step.clone();
        step.action = match (route, step.action) {
            (
                Route::StdioStateless,
                Action::Call {
                    name,
                    args,
                    meta,
                    id,
                    wait,
                },
            ) => Action::Call {
                name,
                args,
                meta: Some(Value::Object(stateless_meta(meta.as_ref()))),
                id,
                wait,
            },
            (
                Route::StdioStateless,
                Action::Request {
                    method,
                    params,
                    id,
                    wait,
                },
            ) => {
                let mut p = match params {
                    Some(Value::Object(p)) => p,
                    _ => Map::new(),
                };
                let meta = stateless_meta(p.get("_meta"));
                p.insert("_meta".into(), Value::Object(meta));
                Action::Request {
                    method,
                    params: Some(Value::Object(p)),
                    id,
                    wait,
                }
            }
            (
                Route::Http | Route::HttpStateless,
                Action::Call {
                    name,
                    args,
                    meta,
                    id,
                    ..
                },
            ) => Action::HttpCall(HttpCallSpec {
                session: None,
                stateless,
                tool: name,
                args,
                capability: None,
                with: None,
                meta,
                headers: Default::default(),
                id,
                expect: None,
                wait: true,
            }),
            (
                Route::Http | Route::HttpStateless,
                Action::Request {
                    method, params, id, ..
                },
            ) => Action::HttpRequest(HttpRequestSpec {
                method,
                params,
                session: None,
                stateless,
                headers: Default::default(),
                id,
                expect: None,
            }),
            (_, other) => other,
        };
        steps.push(step);
    }
    out.steps = steps;
    Ok(out)
}

/// Why a case is about its transport, if it is.
fn portable_across_transports(case: &Case) -> Result<(), String> {
    if case.transport != CaseTransport::Stdio {
        return Err("an HTTP case".into());
    }
    if case.tags.iter().any(|t| t == STDIO_ONLY_TAG) {
        return Err(format!("tagged {STDIO_ONLY_TAG}"));
    }
    if !case.handshake {
        return Err("no default handshake".into());
    }
    if case.expect_startup_failure.is_some() {
        return Err("a startup failure".into());
    }
    if case.exit_code.is_some_and(|c| c != 0) {
        return Err("an exit code".into());
    }
    for step in &case.steps {
        let ok = match &step.action {
            Action::Call { wait, .. } | Action::Request { wait, .. } => *wait,
            Action::Write { .. }
            | Action::SleepMs(_)
            | Action::CheckFiles(_)
            | Action::AssertNoProcess(_)
            | Action::AssertProcess(_)
            | Action::IdpToken(_) => true,
            _ => false,
        };
        if !ok {
            return Err(format!("a `{}` step", step.action.kind()));
        }
        if let Action::Request { method, .. } = &step.action
            && (method == "initialize" || method.starts_with("notifications/"))
        {
            return Err(format!("a `{method}` request"));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::model::parse_case;

    /// Every subset of the four routes (all 16): the cover is drawn from the subset, has
    /// each of its transports and eras, and no smaller part of it does.
    #[test]
    fn covering_is_a_smallest_cover_of_every_subset() {
        let subsets: Vec<Vec<Route>> = (0u32..16)
            .map(|m| {
                (0..4)
                    .filter(|i| m & (1 << i) != 0)
                    .map(|i| Route::ALL[i])
                    .collect()
            })
            .collect();
        let covers = |pick: &[Route], of: &[Route]| {
            of.iter().all(|r| {
                pick.iter().any(|p| p.transport() == r.transport())
                    && pick.iter().any(|p| p.era() == r.era())
            })
        };
        for set in &subsets {
            let cover = covering(set);
            assert!(cover.iter().all(|r| set.contains(r)), "{set:?} → {cover:?}");
            assert!(covers(&cover, set), "{set:?} → {cover:?}");
            let smaller = subsets
                .iter()
                .filter(|s| s.len() < cover.len() && s.iter().all(|r| set.contains(r)))
                .find(|s| covers(s, set));
            assert!(
                smaller.is_none(),
                "{set:?}: {smaller:?} covers with fewer than {cover:?}"
            );
        }
        assert_eq!(covering(&Route::ALL), [Route::Stdio, Route::HttpStateless]);
        assert_eq!(covering(&[Route::Stdio]), [Route::Stdio]);
        assert_eq!(
            covering(&[Route::Stdio, Route::StdioStateless, Route::Http]),
            [Route::StdioStateless, Route::Http]
        );
    }

    #[test]
    fn a_timing_case_runs_on_the_cover_of_the_routes_it_can_take() {
        let timing = case("source: t\ntags: [timing]\nsteps: [{call: view, args: {path: a}}]\n");
        let plain = case("source: t\nsteps: [{call: view, args: {path: a}}]\n");
        let stdio_only =
            case("source: t\ntags: [timing, stdio-only]\nsteps: [{call: view, args: {path: a}}]\n");
        let on = |c: &Case| -> Vec<Route> {
            Route::ALL
                .into_iter()
                .filter(|r| covered_case_runs_on(c, *r, &Route::ALL))
                .collect()
        };
        assert_eq!(on(&timing), [Route::Stdio, Route::HttpStateless]);
        assert_eq!(on(&plain), Route::ALL);
        assert_eq!(on(&stdio_only), [Route::Stdio]);
        // Only HTTP selected: both eras there.
        let http = [Route::Http, Route::HttpStateless];
        assert!(covered_case_runs_on(&timing, Route::Http, &http));
        assert!(covered_case_runs_on(&timing, Route::HttpStateless, &http));
    }

    fn case(yaml: &str) -> Case {
        parse_case(yaml).unwrap()
    }

    #[test]
    fn routes_are_selected_by_transport_and_era() {
        let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        assert_eq!(
            Route::select(&s(&["all"]), &s(&["all"])).unwrap(),
            Route::ALL.to_vec()
        );
        assert_eq!(
            Route::select(&s(&["http"]), &s(&["2026-07-28"])).unwrap(),
            vec![Route::HttpStateless]
        );
        assert_eq!(
            Route::select(&s(&["stdio"]), &s(&["all"])).unwrap(),
            vec![Route::Stdio, Route::StdioStateless]
        );
        assert!(Route::select(&s(&["pigeon"]), &s(&["all"])).is_err());
        assert!(Route::select(&s(&["all"]), &s(&["2024"])).is_err());
    }

    #[test]
    fn a_plain_case_goes_over_http_in_a_session_and_statelessly() {
        let c = case(
            "source: x\ngolden: true\nsteps:\n  - call: view\n    args: {path: a}\n    expect: {is_error: false}\n  - request: {method: tools/list}\n",
        );
        let http = for_route(&c, Route::Http).unwrap();
        assert_eq!(http.transport, CaseTransport::Http);
        assert!(!http.golden, "goldens are stdio transcripts");
        assert!(matches!(http.steps[0].action, Action::HttpInitialize(_)));
        let Action::HttpCall(call) = &http.steps[1].action else {
            panic!("{:?}", http.steps[1].action)
        };
        assert_eq!((call.tool.as_str(), call.stateless), ("view", false));
        assert!(http.steps[1].expect.is_some());
        assert!(
            matches!(&http.steps[2].action, Action::HttpRequest(q) if q.method == "tools/list")
        );

        let stateless = for_route(&c, Route::HttpStateless).unwrap();
        assert_eq!(stateless.steps.len(), 2);
        assert!(matches!(&stateless.steps[0].action, Action::HttpCall(c) if c.stateless));

        let stdio26 = for_route(&c, Route::StdioStateless).unwrap();
        assert!(!stdio26.handshake);
        let Action::Call {
            meta: Some(meta), ..
        } = &stdio26.steps[0].action
        else {
            panic!()
        };
        assert_eq!(
            meta["io.modelcontextprotocol/protocolVersion"],
            "2026-07-28"
        );
        let Action::Request {
            params: Some(p), ..
        } = &stdio26.steps[1].action
        else {
            panic!()
        };
        assert_eq!(
            p["_meta"]["io.modelcontextprotocol/protocolVersion"],
            "2026-07-28"
        );
    }

    #[test]
    fn transport_cases_stay_on_stdio() {
        for yaml in [
            "source: x\nsteps:\n  - send: 'garbage'\n",
            "source: x\nsteps:\n  - call: bash\n    id: a\n    wait: false\n    args: {command: x}\n  - await: a\n",
            "source: x\nsteps:\n  - initialize: {}\n",
            "source: x\ntags: [stdio-only]\nsteps:\n  - call: view\n    args: {path: a}\n",
            "source: x\nhandshake: false\nsteps:\n  - request: {method: ping}\n",
            "source: x\nexit_code: 1\nsteps:\n  - request: {method: ping}\n",
            "source: x\nsteps:\n  - signal: TERM\n",
            "source: x\nsteps:\n  - request: {method: ping}\n",
        ] {
            let c = case(yaml);
            if yaml == "source: x\nsteps:\n  - request: {method: ping}\n" {
                assert!(for_route(&c, Route::Http).is_ok());
                assert!(for_route(&c, Route::HttpStateless).is_err());
                continue;
            }
            assert!(for_route(&c, Route::Http).is_err(), "{yaml}");
            assert!(for_route(&c, Route::StdioStateless).is_err(), "{yaml}");
            assert!(for_route(&c, Route::Stdio).is_ok());
        }
    }
}
