//! `boris-spec adapt` (issue 29 §2): a first adapter for a new server, drafted from its
//! tools/list, so that its author gets a first score in a minute.
//!
//! Each capability is looked for among the tools by name (a list of the names servers
//! give such a tool), then its values among the tool's parameters by name; a value the
//! capability needs that no parameter takes, or a required parameter nothing fills,
//! leaves the capability out with a TODO saying why. Nothing is guessed silently: a
//! drafted mapping that is wrong fails the cases that use it, and every capability not
//! drafted is listed under `unsupported:` with `TODO` in its reason, so the report
//! shows it as not supported rather than passing it by.

use serde_json::Value;

use super::vocabulary::Capability;

/// Per capability: tool names (lower-case, `-` as `_`) in order of preference, and the
/// values it needs, each with the parameter names that take it and the template.
struct Want {
    capability: Capability,
    tools: &'static [&'static str],
    needs: &'static [(&'static [&'static str], Fill)],
    /// Extra arguments that make the tool do this capability.
    fixed: &'static [(&'static str, &'static str)],
}

/// How a value is passed.
#[derive(Clone, Copy)]
enum Fill {
    /// The path, absolute when the parameter's description says so, else as given.
    Path,
    /// A template given as it is.
    T(&'static str),
}

const PATHS: &[&str] = &[
    "path",
    "file_path",
    "filepath",
    "file",
    "filename",
    "absolute_path",
];
const READ: &[&str] = &[
    "read_file",
    "read",
    "view",
    "read_text_file",
    "cat",
    "open_file",
];
const EDIT: &[&str] = &[
    "edit",
    "str_replace",
    "edit_file",
    "replace",
    "replace_in_file",
];
const RUN: &[&str] = &[
    "bash",
    "shell",
    "run_command",
    "execute_command",
    "exec",
    "exec_command",
    "run",
    "shell_exec",
    "run_shell_command",
    "execute",
    "terminal",
    "start_process",
];

const TIMEOUT: (&[&str], Fill) = (&["timeout", "timeout_ms"], Fill::T("{timeout}"));
const DRY_RUN: (&[&str], Fill) = (&["dry_run", "dryrun"], Fill::T("{dry_run}"));
const WHERE: (&[&str], Fill) = (&["path", "dir", "directory"], Fill::Path);

/// Values a capability may give, passed when the tool has a parameter for them (a case
/// giving one the draft did not map is not supported, never run without it).
fn optional(c: Capability) -> &'static [(&'static [&'static str], Fill)] {
    match c {
        Capability::Run => &[TIMEOUT],
        Capability::Replace => &[DRY_RUN],
        Capability::FindFiles => &[WHERE],
        Capability::Search => &[
            WHERE,
            (&["include", "glob", "file_pattern"], Fill::T("{include}")),
            (
                &["ignore_case", "case_insensitive", "-i"],
                Fill::T("{ignore_case}"),
            ),
            (
                &["case_sensitive"],
                Fill::T("{ignore_case|not|default:true}"),
            ),
            (&["context", "context_lines", "-c"], Fill::T("{context}")),
        ],
        _ => &[],
    }
}

const WANTS: &[Want] = &[
    Want {
        capability: Capability::ReadFile,
        tools: READ,
        needs: &[(PATHS, Fill::Path)],
        fixed: &[],
    },
    Want {
        capability: Capability::ReadRange,
        tools: READ,
        needs: &[
            (PATHS, Fill::Path),
            (
                &["start_line", "start", "from_line", "line_start"],
                Fill::T("{start}"),
            ),
            (
                &["end_line", "end", "to_line", "line_end"],
                Fill::T("{end}"),
            ),
        ],
        fixed: &[],
    },
    Want {
        capability: Capability::WriteFile,
        tools: &["write", "write_file", "create_file", "create", "save_file"],
        needs: &[
            (PATHS, Fill::Path),
            (
                &["content", "contents", "text", "file_text", "data"],
                Fill::T("{content}"),
            ),
        ],
        fixed: &[],
    },
    Want {
        capability: Capability::Replace,
        tools: EDIT,
        needs: &[
            (PATHS, Fill::Path),
            (
                &[
                    "old_string",
                    "old_str",
                    "old_text",
                    "oldtext",
                    "old",
                    "search",
                    "find",
                ],
                Fill::T("{old}"),
            ),
            (
                &[
                    "new_string",
                    "new_str",
                    "new_text",
                    "newtext",
                    "new",
                    "replacement",
                    "replace",
                ],
                Fill::T("{new}"),
            ),
        ],
        fixed: &[],
    },
    Want {
        capability: Capability::ListDir,
        tools: &["list_dir", "list_directory", "ls", "list", "list_files"],
        needs: &[(&["path", "dir", "directory", "dir_path"], Fill::Path)],
        fixed: &[],
    },
    Want {
        capability: Capability::Run,
        tools: RUN,
        needs: &[(&["command", "cmd", "script"], Fill::T("{command}"))],
        fixed: &[],
    },
    Want {
        capability: Capability::Search,
        tools: &[
            "grep",
            "search",
            "search_text",
            "search_files",
            "search_code",
            "ripgrep",
            "rg",
        ],
        needs: &[(
            &["pattern", "query", "regex", "search"],
            Fill::T("{pattern}"),
        )],
        fixed: &[],
    },
    Want {
        capability: Capability::FindFiles,
        tools: &["glob", "find_files", "find", "list_files", "search_files"],
        needs: &[(&["pattern", "glob", "name", "query"], Fill::T("{pattern}"))],
        fixed: &[],
    },
];

/// One capability's outcome: the YAML line of its mapping, or why there is none.
pub struct Drafted {
    pub capability: Capability,
    pub mapping: Result<String, String>,
}

/// The capabilities drafted from a tools/list.
pub fn draft(tools: &[Value]) -> Vec<Drafted> {
    WANTS
        .iter()
        .map(|w| Drafted {
            capability: w.capability,
            mapping: draft_one(w, tools),
        })
        .collect()
}

fn normal(name: &str) -> String {
    name.to_ascii_lowercase().replace('-', "_")
}

fn draft_one(w: &Want, tools: &[Value]) -> Result<String, String> {
    let mut why = format!(
        "no tool named like {}",
        w.tools[..3.min(w.tools.len())].join("/")
    );
    for wanted in w.tools {
        for tool in tools {
            let name = tool.get("name").and_then(Value::as_str).unwrap_or("");
            if normal(name) != *wanted {
                continue;
            }
            match args_for(w, tool) {
                Ok(args) => {
                    let args = args.join(", ");
                    return Ok(format!("{{tool: {}, args: {{{args}}}}}", yaml_str(name)));
                }
                Err(e) => why = format!("{name}: {e}"),
            }
        }
    }
    Err(why)
}

/// The arguments of a tool for a capability, or why they cannot be drafted.
fn args_for(w: &Want, tool: &Value) -> Result<Vec<String>, String> {
    let schema = tool.get("inputSchema").cloned().unwrap_or_default();
    let props = schema
        .get("properties")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    let mut args = Vec::new();
    let mut used = Vec::new();
    for (names, fill) in w.needs {
        let Some((param, spec)) = props
            .iter()
            .find(|(p, _)| names.contains(&normal(p).as_str()))
        else {
            return Err(format!(
                "no parameter for {} ({})",
                names[0],
                names.join("/")
            ));
        };
        args.push(format!(
            "{}: {}",
            yaml_str(param),
            yaml_str(&template(*fill, spec))
        ));
        used.push(param.clone());
    }
    for (names, fill) in optional(w.capability) {
        if let Some((param, spec)) = props
            .iter()
            .find(|(p, _)| names.contains(&normal(p).as_str()) && !used.contains(p))
        {
            args.push(format!(
                "{}: {}",
                yaml_str(param),
                yaml_str(&template(*fill, spec))
            ));
            used.push(param.clone());
        }
    }
    for (k, v) in w.fixed {
        args.push(format!("{}: {v}", yaml_str(k)));
        used.push((*k).to_string());
    }
    let required = schema
        .get("required")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    if let Some(r) = required
        .iter()
        .filter_map(Value::as_str)
        .find(|r| !used.iter().any(|u| u == r))
    {
        return Err(format!(
            "its required parameter `{r}` takes nothing the suite gives"
        ));
    }
    Ok(args)
}

/// How a parameter takes a value: a path absolute when its description says so.
fn template(fill: Fill, spec: &Value) -> String {
    match fill {
        Fill::Path => {
            let said = spec
                .get("description")
                .and_then(Value::as_str)
                .unwrap_or("");
            if said.to_ascii_lowercase().contains("absolute") {
                "{path_abs}".into()
            } else {
                "{path}".into()
            }
        }
        Fill::T(t) => t.into(),
    }
}

/// A YAML double-quoted string.
fn yaml_str(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| format!("\"{s}\""))
}

/// The adapter file: the drafted mappings, and every other capability unsupported with
/// a TODO saying why.
pub fn adapter_yaml(name: &str, server: &str, drafted: &[Drafted]) -> String {
    let mut out = format!(
        "# Drafted by `boris-spec adapt` from the server's tools/list: check each mapping\n\
         # (a wrong one fails the cases that use it) and each TODO (a capability the draft\n\
         # could not map is unsupported until you map it or say why it is missing).\n\
         name: {}\nserver: {}\ncapabilities:\n",
        yaml_str(name),
        yaml_str(server)
    );
    for d in drafted {
        if let Ok(m) = &d.mapping {
            out.push_str(&format!("  {}: {m}\n", d.capability));
        }
    }
    out.push_str("unsupported:\n");
    for d in drafted {
        if let Err(why) = &d.mapping {
            out.push_str(&format!(
                "  {}: {}\n",
                d.capability,
                yaml_str(&format!("TODO (adapt: {why})"))
            ));
        }
    }
    for c in Capability::all() {
        if !drafted.iter().any(|d| d.capability == c) {
            out.push_str(&format!(
                "  {c}: {}\n",
                yaml_str("TODO (adapt does not draft it: map it by hand)")
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::adapter::Adapter;
    use serde_json::json;

    #[test]
    fn a_tools_list_becomes_an_adapter_that_loads_with_todos_for_the_rest() {
        let tools = vec![
            json!({"name": "Read", "inputSchema": {"properties": {
                "file_path": {"type": "string", "description": "The absolute path"},
                "offset": {"type": "integer"}}, "required": ["file_path"]}}),
            json!({"name": "Bash", "inputSchema": {"properties": {
                "command": {"type": "string"}, "timeout": {"type": "integer"}}, "required": ["command"]}}),
            // An edit tool whose required parameter nothing fills: not drafted.
            json!({"name": "edit", "inputSchema": {"properties": {
                "path": {"type": "string"}, "old": {"type": "string"}, "new": {"type": "string"},
                "revision": {"type": "string"}}, "required": ["path", "revision"]}}),
        ];
        let d = draft(&tools);
        let got = |c: Capability| {
            d.iter()
                .find(|x| x.capability == c)
                .map(|x| x.mapping.clone())
                .unwrap()
        };
        assert_eq!(
            got(Capability::ReadFile).unwrap(),
            r#"{tool: "Read", args: {"file_path": "{path_abs}"}}"#
        );
        assert!(
            got(Capability::ReadRange)
                .unwrap_err()
                .contains("no parameter for start_line")
        );
        assert!(got(Capability::Replace).unwrap_err().contains("`revision`"));
        let yaml = adapter_yaml("x", "x 1.0", &d);
        let a = Adapter::parse(&yaml).unwrap();
        assert_eq!(a.capabilities[&Capability::Run].tool, "Bash");
        // An optional value the tool takes is mapped too.
        assert_eq!(
            a.capabilities[&Capability::Run].args["timeout"],
            json!("{timeout}")
        );
        assert!(a.unsupported[&Capability::Replace].starts_with("TODO"));
        assert!(a.unsupported[&Capability::TaskOutput].starts_with("TODO"));
    }
}
