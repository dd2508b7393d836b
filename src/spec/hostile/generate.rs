//! Arguments for one tool call, drawn from the tool's input schema by a seeded generator
//! (issue 29 §5): every property gets a plain value, then one thing is made hostile — a
//! string from the corpus its name suggests, a wrong type, a boundary number, a missing
//! required property, an unknown one, deep JSON, a multi-megabyte string, or arguments
//! that are not an object at all. Pure: the same seed draws the same calls.

use rand::RngExt;
use rand::SeedableRng;
use rand::rngs::Xoshiro256PlusPlus;
use serde_json::{Map, Value, json};

use super::corpus;

/// The generator: portable across platforms and rand versions for one seed.
pub type Rng = Xoshiro256PlusPlus;

pub fn rng(seed: u64) -> Rng {
    Xoshiro256PlusPlus::seed_from_u64(seed)
}

/// What a string property is for, guessed from its name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    Path,
    Shell,
    Pattern,
    Text,
}

pub fn role_of(name: &str) -> Role {
    let n = name.to_ascii_lowercase();
    let has = |words: &[&str]| words.iter().any(|w| n.contains(w));
    if has(&[
        "path", "file", "dir", "cwd", "root", "folder", "target", "dest", "source",
    ]) {
        Role::Path
    } else if has(&["command", "cmd", "script", "shell", "chars", "keys"]) {
        Role::Shell
    } else if has(&[
        "pattern", "regex", "glob", "query", "search", "include", "exclude",
    ]) {
        Role::Pattern
    } else {
        Role::Text
    }
}

/// The one hostile thing a drawn call carries (its name is printed with a failure).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Attack {
    /// A corpus string in one string property.
    Hostile { property: String },
    /// A value of the wrong JSON type in one property.
    WrongType { property: String },
    /// A boundary number in one numeric property.
    Boundary { property: String },
    /// One required property left out.
    MissingRequired { property: String },
    /// A property the schema does not name.
    Unknown,
    /// Arrays nested `depth` deep in one property.
    Deep { property: String, depth: usize },
    /// A string of `bytes` in one string property.
    Huge { property: String, bytes: usize },
    /// `arguments` is not an object.
    NotAnObject,
}

impl std::fmt::Display for Attack {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Attack::Hostile { property } => write!(f, "a hostile string in `{property}`"),
            Attack::WrongType { property } => write!(f, "a wrong type in `{property}`"),
            Attack::Boundary { property } => write!(f, "a boundary number in `{property}`"),
            Attack::MissingRequired { property } => write!(f, "`{property}` (required) left out"),
            Attack::Unknown => write!(f, "an unknown property"),
            Attack::Deep { property, depth } => {
                write!(f, "arrays nested {depth} deep in `{property}`")
            }
            Attack::Huge { property, bytes } => write!(f, "{bytes} bytes in `{property}`"),
            Attack::NotAnObject => write!(f, "arguments that are not an object"),
        }
    }
}

/// One drawn call.
#[derive(Debug, Clone, PartialEq)]
pub struct Drawn {
    pub args: Value,
    pub attack: Attack,
}

/// The properties of an object schema, in the schema's order.
fn properties(schema: &Value) -> Vec<(String, Value)> {
    schema
        .get("properties")
        .and_then(Value::as_object)
        .map(|m| m.iter().map(|(k, v)| (k.clone(), v.clone())).collect())
        .unwrap_or_default()
}

fn required(schema: &Value) -> Vec<String> {
    schema
        .get("required")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}

/// A property's JSON type: its `type` (the first non-null one of a list), or what its
/// `enum`, `anyOf` or `oneOf` says; "string" when nothing says.
pub fn type_of(schema: &Value) -> &str {
    match schema.get("type") {
        Some(Value::String(t)) => return t,
        Some(Value::Array(ts)) => {
            if let Some(t) = ts.iter().filter_map(Value::as_str).find(|t| *t != "null") {
                return t;
            }
        }
        _ => {}
    }
    if let Some(first) = schema
        .get("enum")
        .and_then(Value::as_array)
        .and_then(|e| e.first())
    {
        return match first {
            Value::Number(_) => "number",
            Value::Bool(_) => "boolean",
            _ => "string",
        };
    }
    for key in ["anyOf", "oneOf"] {
        if let Some(alts) = schema.get(key).and_then(Value::as_array) {
            for alt in alts {
                let t = type_of(alt);
                if t != "null" {
                    return t;
                }
            }
        }
    }
    "string"
}

/// A plain value a careful client would send for `schema` named `name`.
pub fn plain(name: &str, schema: &Value) -> Value {
    if let Some(first) = schema
        .get("enum")
        .and_then(Value::as_array)
        .and_then(|e| e.first())
    {
        return first.clone();
    }
    match type_of(schema) {
        "integer" | "number" => {
            let min = schema.get("minimum").and_then(Value::as_f64).unwrap_or(1.0);
            let max = schema
                .get("maximum")
                .and_then(Value::as_f64)
                .unwrap_or(f64::MAX);
            json!(min.max(1.0).min(max) as i64)
        }
        "boolean" => json!(false),
        "array" => json!([]),
        "object" => json!({}),
        _ => json!(match role_of(name) {
            Role::Path => "a.txt",
            Role::Shell => "echo ok",
            Role::Pattern => "ok",
            Role::Text => "ok",
        }),
    }
}

/// A value of another type than `schema` asks for.
fn wrong_type(schema: &Value, rng: &mut Rng) -> Value {
    let choices: Vec<Value> = match type_of(schema) {
        "integer" | "number" => vec![
            json!("1"),
            json!("1e999"),
            json!(true),
            json!(null),
            json!([1]),
        ],
        "boolean" => vec![json!("true"), json!(1), json!(null), json!({})],
        "array" => vec![json!("a.txt"), json!({}), json!(null), json!(7)],
        "object" => vec![json!([]), json!("x"), json!(null), json!(0)],
        _ => vec![
            json!(0),
            json!(true),
            json!(null),
            json!([]),
            json!({}),
            json!(["a.txt"]),
            json!({"path": "a.txt"}),
        ],
    };
    choices[rng.random_range(0..choices.len())].clone()
}

fn pick<'a>(list: &[&'a str], rng: &mut Rng) -> &'a str {
    list[rng.random_range(0..list.len())]
}

/// A hostile string for a property of `role`: mostly from its own corpus, sometimes from
/// another's (a path where a command goes is hostile too).
pub fn hostile_string(role: Role, rng: &mut Rng) -> String {
    let own = match role {
        Role::Path => corpus::PATHS,
        Role::Shell => corpus::SHELL,
        Role::Pattern => corpus::PATTERNS,
        Role::Text => corpus::TEXT,
    };
    let list = if rng.random_bool(0.8) {
        own
    } else {
        [corpus::PATHS, corpus::SHELL, corpus::PATTERNS, corpus::TEXT][rng.random_range(0..4)]
    };
    match rng.random_range(0..10) {
        // Long names: 255 bytes (the most a name may have) and 256.
        0 if role == Role::Path => "x".repeat(254 + rng.random_range(1..3usize)),
        // Deep nesting: past PATH_MAX (4096) half the time.
        1 if role == Role::Path => {
            let depth = [300, 2100][rng.random_range(0..2)];
            format!("{}f", "d/".repeat(depth))
        }
        _ => pick(list, rng).to_string(),
    }
}

fn nested(depth: usize) -> Value {
    let mut v = json!([]);
    for _ in 0..depth {
        v = Value::Array(vec![v]);
    }
    v
}

/// Draws one call's arguments for a tool with `schema` (its `inputSchema`).
pub fn draw(schema: &Value, rng: &mut Rng) -> Drawn {
    let props = properties(schema);
    let required = required(schema);
    let mut args = Map::new();
    for (name, s) in &props {
        if required.contains(name) || rng.random_bool(0.5) {
            args.insert(name.clone(), plain(name, s));
        }
    }
    let strings: Vec<&(String, Value)> = props
        .iter()
        .filter(|(_, s)| type_of(s) == "string" && s.get("enum").is_none())
        .collect();
    let numbers: Vec<&(String, Value)> = props
        .iter()
        .filter(|(_, s)| matches!(type_of(s), "integer" | "number"))
        .collect();
    // Weights: most calls carry a hostile string; the rest spread over the other kinds.
    let roll = rng.random_range(0..100);
    let attack = match roll {
        0..=54 if !strings.is_empty() => {
            let (name, _) = strings[rng.random_range(0..strings.len())];
            let text = hostile_string(role_of(name), rng);
            args.insert(name.clone(), Value::String(text));
            Attack::Hostile {
                property: name.clone(),
            }
        }
        55..=69 if !props.is_empty() => {
            let (name, s) = &props[rng.random_range(0..props.len())];
            args.insert(name.clone(), wrong_type(s, rng));
            Attack::WrongType {
                property: name.clone(),
            }
        }
        70..=77 if !numbers.is_empty() => {
            let (name, _) = numbers[rng.random_range(0..numbers.len())];
            let n: Value = serde_json::from_str(pick(corpus::NUMBERS, rng)).unwrap_or(json!(-1));
            args.insert(name.clone(), n);
            Attack::Boundary {
                property: name.clone(),
            }
        }
        78..=84 if !required.is_empty() => {
            let name = required[rng.random_range(0..required.len())].clone();
            args.remove(&name);
            Attack::MissingRequired { property: name }
        }
        // Past the 128 levels JSON parsers allow, yet shallow enough to build, compare and
        // drop on a test thread's 2 MiB stack.
        85..=88 if !props.is_empty() => {
            let (name, _) = &props[rng.random_range(0..props.len())];
            let depth = [64, 200, 1000][rng.random_range(0..3)];
            args.insert(name.clone(), nested(depth));
            Attack::Deep {
                property: name.clone(),
                depth,
            }
        }
        89..=91 if !strings.is_empty() => {
            let (name, _) = strings[rng.random_range(0..strings.len())];
            let bytes = rng.random_range(1..=4) * 1024 * 1024;
            args.insert(name.clone(), Value::String("a".repeat(bytes)));
            Attack::Huge {
                property: name.clone(),
                bytes,
            }
        }
        92..=94 => {
            let values = [json!([]), json!("a.txt"), json!(7), json!(null)];
            return Drawn {
                args: values[rng.random_range(0..values.len())].clone(),
                attack: Attack::NotAnObject,
            };
        }
        _ => {
            args.insert("__boris_spec_unknown".into(), json!("x"));
            Attack::Unknown
        }
    };
    Drawn {
        args: Value::Object(args),
        attack,
    }
}

/// Smaller versions of a failing call's arguments, simplest first, for shrinking: each
/// property left out, a long string halved, an array halved, nesting unwrapped.
pub fn smaller(args: &Value) -> Vec<Value> {
    let mut out = Vec::new();
    let Some(map) = args.as_object() else {
        return out;
    };
    for key in map.keys() {
        let mut m = map.clone();
        m.remove(key);
        out.push(Value::Object(m));
    }
    for (key, v) in map {
        let simpler = match v {
            Value::String(s) if s.len() > 16 => {
                let mut cut = s.len() / 2;
                while !s.is_char_boundary(cut) {
                    cut -= 1;
                }
                Some(Value::String(s[..cut].to_string()))
            }
            Value::Array(a) if a.len() > 1 => Some(Value::Array(a[..a.len() / 2].to_vec())),
            Value::Array(a) if a.len() == 1 && a[0].is_array() => Some(a[0].clone()),
            _ => None,
        };
        if let Some(simpler) = simpler {
            let mut m = map.clone();
            m.insert(key.clone(), simpler);
            out.push(Value::Object(m));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn schema() -> Value {
        json!({"type": "object", "properties": {
            "path": {"type": "string"},
            "command": {"type": "string"},
            "pattern": {"type": "string"},
            "limit": {"type": "integer", "minimum": 1, "maximum": 100},
            "dry_run": {"type": "boolean"},
            "mode": {"type": "string", "enum": ["a", "b"]},
            "edits": {"type": "array", "items": {"type": "object"}}
        }, "required": ["path"]})
    }

    #[test]
    fn roles_come_from_names() {
        assert_eq!(role_of("file_path"), Role::Path);
        assert_eq!(role_of("command"), Role::Shell);
        assert_eq!(role_of("pattern"), Role::Pattern);
        assert_eq!(role_of("old_string"), Role::Text);
    }

    #[test]
    fn plain_values_fit_their_schemas() {
        let s = schema();
        assert_eq!(plain("limit", &s["properties"]["limit"]), json!(1));
        assert_eq!(plain("mode", &s["properties"]["mode"]), json!("a"));
        assert_eq!(plain("path", &s["properties"]["path"]), json!("a.txt"));
        assert_eq!(type_of(&json!({"type": ["null", "integer"]})), "integer");
        assert_eq!(
            type_of(&json!({"anyOf": [{"type": "null"}, {"type": "boolean"}]})),
            "boolean"
        );
    }

    #[test]
    fn no_path_climbs_out_of_the_run_root_or_names_the_machine() {
        for p in corpus::PATHS {
            let climbs = p
                .replace('\\', "/")
                .split('/')
                .filter(|c| *c == "..")
                .count();
            assert!(climbs <= 2, "{p:?} climbs too far");
            assert!(
                !p.starts_with('/') && !p.contains("://"),
                "{p:?} names the machine"
            );
        }
    }

    proptest! {
        #[test]
        fn a_seed_draws_the_same_calls(seed in any::<u64>()) {
            let (mut a, mut b) = (rng(seed), rng(seed));
            for _ in 0..20 {
                prop_assert_eq!(draw(&schema(), &mut a), draw(&schema(), &mut b));
            }
        }

        #[test]
        fn every_draw_names_what_it_made_hostile(seed in any::<u64>()) {
            let mut r = rng(seed);
            let d = draw(&schema(), &mut r);
            match &d.attack {
                Attack::NotAnObject => prop_assert!(!d.args.is_object()),
                Attack::MissingRequired { property } => {
                    prop_assert!(d.args.get(property).is_none())
                }
                Attack::Unknown => prop_assert!(d.args.get("__boris_spec_unknown").is_some()),
                Attack::Hostile { property }
                | Attack::WrongType { property }
                | Attack::Boundary { property }
                | Attack::Deep { property, .. }
                | Attack::Huge { property, .. } => prop_assert!(d.args.get(property).is_some()),
            }
        }

        #[test]
        fn shrinking_only_makes_arguments_smaller(seed in any::<u64>()) {
            let mut r = rng(seed);
            let d = draw(&schema(), &mut r);
            let size = d.args.to_string().len();
            for s in smaller(&d.args) {
                prop_assert!(s.to_string().len() < size);
            }
        }
    }
}
