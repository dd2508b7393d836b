//! Tool definitions: an input schema generated from each tool's argument type, rewritten
//! into the plain shape every client reads, and the annotations.

use crate::tool_name::ToolName;
use rmcp::model::{JsonObject, Tool, ToolAnnotations};
use schemars::JsonSchema;
use std::sync::Arc;

/// A tool definition from its argument type (whose doc comments become the schema's
/// descriptions).
pub fn define<T: JsonSchema + 'static>(
    name: ToolName,
    title: &str,
    description: &'static str,
    annotations: ToolAnnotations,
) -> Tool {
    let mut schema = (*rmcp::handler::server::common::schema_for_type::<T>()).clone();
    portable_schema(&mut schema);
    Tool::new(name.as_str(), description, Arc::new(schema))
        .with_title(title)
        .with_annotations(annotations)
}

/// Rewrites a generated input schema into the plain shape every client reads: an
/// optional parameter is one that is not `required`, with a plain `type` — not
/// `["string", "null"]` with `default: null`, which is how schemars spells `Option<T>`
/// and which clients (the MCP Inspector among them) flag as unportable. Integer formats
/// that are not JSON Schema's (`uint64`, `int64`, `uint`) go too; `minimum` says the
/// rest. Nested object schemas (array items, sub-objects) get the same treatment. Every
/// `$ref` is replaced by the definition it names and `$defs` goes (issue 21 §4): Gemini's
/// API, Copilot CLI and opencode reject or mangle references.
pub fn portable_schema(schema: &mut JsonObject) {
    inline_references(schema);
    use serde_json::Value;
    const RUST_FORMATS: &[&str] = &[
        "uint", "uint8", "uint16", "uint32", "uint64", "int", "int8", "int16", "int32", "int64",
        "double", "float",
    ];
    fn clean(node: &mut Value) {
        let Value::Object(obj) = node else {
            return;
        };
        if let Some(Value::Array(types)) = obj.get("type") {
            let kept: Vec<Value> = types
                .iter()
                .filter(|t| t.as_str() != Some("null"))
                .cloned()
                .collect();
            if kept.len() == 1 {
                obj.insert("type".into(), kept[0].clone());
            } else if kept.len() != types.len() {
                obj.insert("type".into(), Value::Array(kept));
            }
        }
        // `Option<Enum>` comes as `anyOf: [{enum…}, {type: null}]`.
        if let Some(Value::Array(any)) = obj.get("anyOf") {
            let kept: Vec<Value> = any
                .iter()
                .filter(|s| s.get("type").and_then(Value::as_str) != Some("null"))
                .cloned()
                .collect();
            if kept.len() == 1 && kept.len() != any.len() {
                obj.remove("anyOf");
                if let Value::Object(inner) = &kept[0] {
                    for (k, v) in inner {
                        obj.entry(k.clone()).or_insert_with(|| v.clone());
                    }
                }
            }
        }
        if obj.get("default") == Some(&Value::Null) {
            obj.remove("default");
        }
        if obj
            .get("format")
            .and_then(Value::as_str)
            .is_some_and(|f| RUST_FORMATS.contains(&f))
        {
            obj.remove("format");
        }
        for key in ["properties", "$defs", "definitions"] {
            if let Some(Value::Object(children)) = obj.get_mut(key) {
                for child in children.values_mut() {
                    clean(child);
                }
            }
        }
        for key in ["items", "additionalProperties"] {
            if let Some(child) = obj.get_mut(key) {
                clean(child);
            }
        }
        for key in ["anyOf", "oneOf", "allOf"] {
            if let Some(Value::Array(children)) = obj.get_mut(key) {
                for child in children {
                    clean(child);
                }
            }
        }
    }
    let mut root = Value::Object(std::mem::take(schema));
    clean(&mut root);
    if let Value::Object(obj) = root {
        *schema = obj;
    }
}

/// Replaces each `{"$ref": "#/$defs/Name"}` (or `#/definitions/Name`) by the definition,
/// recursively, and drops the definitions. A reference that would recurse more than 16
/// deep is left as it is (no tool's arguments are recursive).
fn inline_references(schema: &mut JsonObject) {
    use serde_json::Value;
    let mut defs = JsonObject::new();
    for key in ["$defs", "definitions"] {
        if let Some(Value::Object(d)) = schema.remove(key) {
            defs.extend(d);
        }
    }
    if defs.is_empty() {
        return;
    }
    fn resolve(node: &mut Value, defs: &JsonObject, depth: usize) {
        match node {
            Value::Object(obj) => {
                let target = obj
                    .get("$ref")
                    .and_then(Value::as_str)
                    .and_then(|r| {
                        r.strip_prefix("#/$defs/")
                            .or_else(|| r.strip_prefix("#/definitions/"))
                    })
                    .and_then(|name| defs.get(name))
                    .cloned();
                if let (Some(Value::Object(def)), true) = (target, depth < 16) {
                    obj.remove("$ref");
                    // Keywords beside the reference (a description) win over the definition's.
                    for (k, v) in def {
                        obj.entry(k).or_insert(v);
                    }
                    resolve(node, defs, depth + 1);
                    return;
                }
                for child in obj.values_mut() {
                    resolve(child, defs, depth);
                }
            }
            Value::Array(items) => {
                for child in items {
                    resolve(child, defs, depth);
                }
            }
            _ => {}
        }
    }
    let mut root = Value::Object(std::mem::take(schema));
    resolve(&mut root, &defs, 0);
    if let Value::Object(obj) = root {
        *schema = obj;
    }
}

/// Drops what a model pays to read and learns nothing from (issue 28 §6): the schema's
/// `$schema` URI and its root `title` (the Rust type's name), and the annotations' title,
/// which repeats the tool's own `title`.
pub fn trim_for_model(tool: &mut Tool) {
    let schema = Arc::make_mut(&mut tool.input_schema);
    schema.remove("$schema");
    schema.remove("title");
    if let Some(annotations) = tool.annotations.as_mut() {
        annotations.title = None;
    }
}

pub fn read_only(title: &str) -> ToolAnnotations {
    let mut a = ToolAnnotations::with_title(title);
    a.read_only_hint = Some(true);
    a.destructive_hint = Some(false);
    a.idempotent_hint = Some(true);
    a.open_world_hint = Some(false);
    a
}

/// A tool that runs arbitrary commands: it can do anything, anywhere.
pub fn runs_commands(title: &str) -> ToolAnnotations {
    let mut a = writes(title, false);
    a.open_world_hint = Some(true);
    a
}

pub fn writes(title: &str, idempotent: bool) -> ToolAnnotations {
    let mut a = ToolAnnotations::with_title(title);
    a.read_only_hint = Some(false);
    a.destructive_hint = Some(true);
    a.idempotent_hint = Some(idempotent);
    a.open_world_hint = Some(false);
    a
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schemas_are_portable() {
        use serde_json::json;
        let mut s = json!({
            "type": "object",
            "properties": {
                "a": {"type": ["string", "null"], "default": null},
                "b": {"type": ["integer", "null"], "format": "uint64", "minimum": 0},
                "c": {"anyOf": [{"enum": ["x", "y"], "type": "string"}, {"type": "null"}], "description": "d"},
                "d": {"type": "array", "items": {"type": "object", "properties": {"e": {"type": ["boolean", "null"]}}}}
            },
            "required": []
        })
        .as_object()
        .cloned()
        .unwrap_or_default();
        portable_schema(&mut s);
        assert_eq!(
            serde_json::Value::Object(s),
            json!({
                "type": "object",
                "properties": {
                    "a": {"type": "string"},
                    "b": {"type": "integer", "minimum": 0},
                    "c": {"enum": ["x", "y"], "type": "string", "description": "d"},
                    "d": {"type": "array", "items": {"type": "object", "properties": {"e": {"type": "boolean"}}}}
                },
                "required": []
            })
        );
    }

    #[test]
    fn references_are_inlined() {
        use serde_json::json;
        let mut s = json!({
            "type": "object",
            "properties": {"edits": {"type": "array", "items": {"$ref": "#/$defs/One", "description": "one edit"}}},
            "$defs": {"One": {"type": "object", "description": "d", "properties": {"x": {"$ref": "#/$defs/X"}}}, "X": {"type": "string"}}
        })
        .as_object()
        .cloned()
        .unwrap_or_default();
        portable_schema(&mut s);
        assert_eq!(
            serde_json::Value::Object(s),
            json!({
                "type": "object",
                "properties": {"edits": {"type": "array", "items": {"type": "object", "description": "one edit", "properties": {"x": {"type": "string"}}}}}
            })
        );
    }
}
