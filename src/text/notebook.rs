//! Jupyter notebooks (nbformat 4), pure: rendering the cells for a read, and the three
//! cell edits of `NotebookEdit` (issue 15 §1).
//!
//! An edit rewrites the file the way Jupyter writes it — keys sorted, one-space indent,
//! non-ASCII kept, a final newline — so the cells an edit does not touch come out byte for
//! byte as they were in any notebook Jupyter (or nbformat) saved. A cell is named by its
//! `id` (nbformat 4.5+) or, in notebooks without ids, by `cell-N` (0-based position), the
//! name a read shows.

use serde_json::{Map, Value};

/// Why a notebook could not be read or edited.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NotebookError {
    /// Not JSON, or not a notebook (no `cells` list).
    Invalid(String),
    /// No cell has this id.
    CellNotFound { id: String, known: Vec<String> },
    /// The edit's arguments do not fit (e.g. insert without cell_type).
    Input(String),
}

/// A parsed notebook: its cells, and everything else as it was.
pub struct Notebook {
    /// The top-level object without `cells`.
    root: Map<String, Value>,
    cells: Vec<Value>,
}

/// How `NotebookEdit` changes the cell list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EditMode {
    Replace,
    Insert,
    Delete,
}

impl Notebook {
    pub fn parse(bytes: &[u8]) -> Result<Notebook, NotebookError> {
        let value: Value = serde_json::from_slice(bytes)
            .map_err(|e| NotebookError::Invalid(format!("it is not valid JSON ({e})")))?;
        let Value::Object(mut root) = value else {
            return Err(NotebookError::Invalid(
                "its top level is not an object".into(),
            ));
        };
        let Some(Value::Array(cells)) = root.remove("cells") else {
            return Err(NotebookError::Invalid("it has no `cells` list".into()));
        };
        Ok(Notebook { root, cells })
    }

    /// The name a read shows for the cell at `index`: its id, else `cell-N`.
    fn cell_name(cell: &Value, index: usize) -> String {
        cell.get("id")
            .and_then(Value::as_str)
            .map(str::to_string)
            .unwrap_or_else(|| format!("cell-{index}"))
    }

    fn position(&self, id: &str) -> Result<usize, NotebookError> {
        let cells = &self.cells;
        cells
            .iter()
            .enumerate()
            .position(|(i, c)| Self::cell_name(c, i) == id)
            .ok_or_else(|| NotebookError::CellNotFound {
                id: id.to_string(),
                known: cells
                    .iter()
                    .enumerate()
                    .map(|(i, c)| Self::cell_name(c, i))
                    .collect(),
            })
    }

    /// The cells as a read shows them: each cell's id and type, its source, and the text
    /// of its outputs (images and other rich outputs named, not shown).
    pub fn render(&self) -> String {
        let mut out = String::new();
        for (i, cell) in self.cells.iter().enumerate() {
            let kind = cell
                .get("cell_type")
                .and_then(Value::as_str)
                .unwrap_or("code");
            out.push_str(&format!(
                "<cell id=\"{}\" type=\"{kind}\">\n",
                Self::cell_name(cell, i)
            ));
            let source = joined(cell.get("source"));
            out.push_str(&source);
            if !source.is_empty() && !source.ends_with('\n') {
                out.push('\n');
            }
            out.push_str("</cell>\n");
            for output in cell
                .get("outputs")
                .and_then(Value::as_array)
                .map(Vec::as_slice)
                .unwrap_or_default()
            {
                let text = output_text(output);
                if text.is_empty() {
                    continue;
                }
                out.push_str("<output>\n");
                out.push_str(&text);
                if !text.ends_with('\n') {
                    out.push('\n');
                }
                out.push_str("</output>\n");
            }
        }
        out
    }

    /// Applies one edit; returns the name of the cell it made, changed or removed.
    pub fn edit(
        &mut self,
        mode: EditMode,
        cell_id: Option<&str>,
        new_source: &str,
        cell_type: Option<&str>,
    ) -> Result<String, NotebookError> {
        if let Some(t) = cell_type
            && t != "code"
            && t != "markdown"
        {
            return Err(NotebookError::Input(format!(
                "cell_type must be code or markdown, got {t:?}"
            )));
        }
        match mode {
            EditMode::Replace => {
                let id = cell_id.ok_or_else(|| {
                    NotebookError::Input("edit_mode replace needs the cell_id of the cell".into())
                })?;
                let at = self.position(id)?;
                let cell = &mut self.cells[at];
                if let Value::Object(c) = cell {
                    c.insert("source".into(), source_lines(new_source));
                    if let Some(t) = cell_type {
                        c.insert("cell_type".into(), Value::String(t.into()));
                    }
                    shape_for_type(c);
                }
                Ok(id.to_string())
            }
            EditMode::Insert => {
                let kind = cell_type.ok_or_else(|| {
                    NotebookError::Input(
                        "edit_mode insert needs cell_type (code or markdown)".into(),
                    )
                })?;
                let at = match cell_id {
                    Some(id) => self.position(id)? + 1,
                    None => 0,
                };
                let with_ids = self.uses_ids();
                let mut c = Map::new();
                c.insert("cell_type".into(), Value::String(kind.into()));
                let name = if with_ids {
                    let id = self.fresh_id();
                    c.insert("id".into(), Value::String(id.clone()));
                    Some(id)
                } else {
                    None
                };
                c.insert("metadata".into(), Value::Object(Map::new()));
                c.insert("source".into(), source_lines(new_source));
                shape_for_type(&mut c);
                self.cells.insert(at, Value::Object(c));
                Ok(name.unwrap_or_else(|| format!("cell-{at}")))
            }
            EditMode::Delete => {
                let id = cell_id.ok_or_else(|| {
                    NotebookError::Input("edit_mode delete needs the cell_id of the cell".into())
                })?;
                let at = self.position(id)?;
                self.cells.remove(at);
                Ok(id.to_string())
            }
        }
    }

    /// Whether cells carry ids (nbformat 4.5 and later).
    fn uses_ids(&self) -> bool {
        let minor = self
            .root
            .get("nbformat_minor")
            .and_then(Value::as_u64)
            .unwrap_or(0);
        minor >= 5 || self.cells.iter().any(|c| c.get("id").is_some())
    }

    fn fresh_id(&self) -> String {
        loop {
            let id = format!("{:08x}", rand::random::<u32>());
            if self.position(&id).is_err() {
                return id;
            }
        }
    }

    /// The notebook as Jupyter writes it: sorted keys, one-space indent, a final newline.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut root = self.root.clone();
        root.insert("cells".into(), Value::Array(self.cells.clone()));
        let sorted = sort_keys(&Value::Object(root));
        let mut buf = Vec::new();
        let formatter = serde_json::ser::PrettyFormatter::with_indent(b" ");
        let mut ser = serde_json::Serializer::with_formatter(&mut buf, formatter);
        // Serialising a Value into memory cannot fail.
        let _ = serde::Serialize::serialize(&sorted, &mut ser);
        buf.push(b'\n');
        buf
    }
}

/// A code cell has `outputs` and `execution_count` (reset: its old outputs no longer
/// belong to its source); a markdown cell has neither.
fn shape_for_type(c: &mut Map<String, Value>) {
    if c.get("cell_type").and_then(Value::as_str) == Some("code") {
        c.insert("outputs".into(), Value::Array(Vec::new()));
        c.insert("execution_count".into(), Value::Null);
    } else {
        c.remove("outputs");
        c.remove("execution_count");
    }
}

/// nbformat's multiline string: a list of lines, each keeping its newline.
fn source_lines(text: &str) -> Value {
    Value::Array(
        text.split_inclusive('\n')
            .map(|l| Value::String(l.to_string()))
            .collect(),
    )
}

/// A multiline string field (a list of strings or one string) as one string.
fn joined(v: Option<&Value>) -> String {
    match v {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(parts)) => parts.iter().filter_map(Value::as_str).collect(),
        _ => String::new(),
    }
}

/// The text of one output: a stream's text, a result's `text/plain`, an error's name
/// and message; other data named by its MIME type.
fn output_text(output: &Value) -> String {
    match output.get("output_type").and_then(Value::as_str) {
        Some("stream") => joined(output.get("text")),
        Some("execute_result" | "display_data") => {
            let data = output.get("data").and_then(Value::as_object);
            match data.and_then(|d| d.get("text/plain")) {
                Some(t) => joined(Some(t)),
                None => data
                    .map(|d| {
                        d.keys()
                            .map(|k| format!("[{k} output]"))
                            .collect::<Vec<_>>()
                            .join("\n")
                    })
                    .unwrap_or_default(),
            }
        }
        Some("error") => {
            let name = output
                .get("ename")
                .and_then(Value::as_str)
                .unwrap_or("Error");
            let value = output.get("evalue").and_then(Value::as_str).unwrap_or("");
            format!("{name}: {value}")
        }
        _ => String::new(),
    }
}

fn sort_keys(v: &Value) -> Value {
    match v {
        Value::Object(m) => {
            let mut keys: Vec<&String> = m.keys().collect();
            keys.sort();
            let mut out = Map::new();
            for k in keys {
                out.insert(k.clone(), sort_keys(&m[k]));
            }
            Value::Object(out)
        }
        Value::Array(a) => Value::Array(a.iter().map(sort_keys).collect()),
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A notebook as Jupyter saves it (json.dumps(nb, sort_keys=True, indent=1,
    /// ensure_ascii=False) + "\n").
    const SAVED: &str = r##"{
 "cells": [
  {
   "cell_type": "markdown",
   "id": "a1",
   "metadata": {},
   "source": [
    "# Título\n",
    "text"
   ]
  },
  {
   "cell_type": "code",
   "execution_count": 1,
   "id": "b2",
   "metadata": {},
   "outputs": [
    {
     "name": "stdout",
     "output_type": "stream",
     "text": [
      "hi\n"
     ]
    },
    {
     "data": {
      "image/png": "iVBORw0KGgo=",
      "text/plain": [
       "<Figure>"
      ]
     },
     "metadata": {},
     "output_type": "display_data"
    }
   ],
   "source": [
    "print('hi')"
   ]
  }
 ],
 "metadata": {
  "kernelspec": {
   "display_name": "Python 3",
   "language": "python",
   "name": "python3"
  }
 },
 "nbformat": 4,
 "nbformat_minor": 5
}
"##;

    #[test]
    fn round_trip_is_byte_identical() {
        let nb = Notebook::parse(SAVED.as_bytes()).unwrap();
        assert_eq!(String::from_utf8(nb.to_bytes()).unwrap(), SAVED);
    }

    #[test]
    fn render_shows_cells_and_text_outputs() {
        let nb = Notebook::parse(SAVED.as_bytes()).unwrap();
        assert_eq!(
            nb.render(),
            "<cell id=\"a1\" type=\"markdown\">\n# Título\ntext\n</cell>\n\
             <cell id=\"b2\" type=\"code\">\nprint('hi')\n</cell>\n\
             <output>\nhi\n</output>\n<output>\n<Figure>\n</output>\n"
        );
    }

    #[test]
    fn edits_touch_one_cell_only() {
        let mut nb = Notebook::parse(SAVED.as_bytes()).unwrap();
        nb.edit(EditMode::Replace, Some("a1"), "# New\n", None)
            .unwrap();
        let out = String::from_utf8(nb.to_bytes()).unwrap();
        // The code cell, untouched, is still the same bytes.
        let code_cell = &SAVED[SAVED.find("  {\n   \"cell_type\": \"code\"").unwrap()
            ..SAVED.find(" ],\n \"metadata\"").unwrap()];
        assert!(out.contains(code_cell), "{out}");
        assert!(out.contains("\"# New\\n\""), "{out}");

        let id = nb
            .edit(EditMode::Insert, Some("a1"), "x = 1", Some("code"))
            .unwrap();
        assert_eq!(id.len(), 8);
        let rendered = nb.render();
        assert!(rendered.contains(&format!("<cell id=\"{id}\" type=\"code\">\nx = 1\n")));
        nb.edit(EditMode::Delete, Some("b2"), "", None).unwrap();
        // (The inserted cell's random id may contain "b2" too.)
        assert!(!nb.render().contains("<cell id=\"b2\""));
    }

    #[test]
    fn refusals() {
        let mut nb = Notebook::parse(SAVED.as_bytes()).unwrap();
        assert!(matches!(
            nb.edit(EditMode::Replace, Some("zz"), "", None),
            Err(NotebookError::CellNotFound { known, .. }) if known == ["a1", "b2"]
        ));
        assert!(matches!(
            nb.edit(EditMode::Insert, None, "x", None),
            Err(NotebookError::Input(_))
        ));
        assert!(matches!(
            nb.edit(EditMode::Replace, None, "x", None),
            Err(NotebookError::Input(_))
        ));
        assert!(matches!(
            nb.edit(EditMode::Insert, None, "x", Some("raw")),
            Err(NotebookError::Input(_))
        ));
        assert!(matches!(
            Notebook::parse(b"{not json"),
            Err(NotebookError::Invalid(_))
        ));
        assert!(matches!(
            Notebook::parse(b"[]"),
            Err(NotebookError::Invalid(_))
        ));
    }

    #[test]
    fn cells_without_ids_are_named_by_position() {
        let mut nb = Notebook::parse(
            br#"{"cells": [{"cell_type": "code", "source": "a", "metadata": {}, "outputs": [], "execution_count": null}], "metadata": {}, "nbformat": 4, "nbformat_minor": 2}"#,
        )
        .unwrap();
        assert!(
            nb.render()
                .starts_with("<cell id=\"cell-0\" type=\"code\">\na\n")
        );
        let name = nb
            .edit(EditMode::Insert, Some("cell-0"), "b", Some("markdown"))
            .unwrap();
        assert_eq!(name, "cell-1");
        assert!(!String::from_utf8(nb.to_bytes()).unwrap().contains("\"id\""));
    }
}
