//! `--log-format json`: one JSON object per line whose fields are JSON values.
//!
//! tracing-subscriber's own JSON formatter records every `?value` field as the string of
//! its `Debug` output (`"allowed":"[\"/src\"]"`); structured values need its unstable
//! `valuable` support, which takes a `--cfg` flag for the whole build. Instead a field
//! logged as `?Json(value)` hands its `serde_json::Value` to this formatter through a
//! thread-local slot while the formatter asks for its `Debug` text, and lands in the
//! line as a real array, object or number. Under the text format `Json` prints the same
//! value as compact JSON.

use serde::Serialize;
use serde_json::{Map, Value};
use std::cell::RefCell;
use std::fmt;
use tracing::field::{Field, Visit};
use tracing::{Event, Subscriber};
use tracing_subscriber::fmt::format::Writer;
use tracing_subscriber::fmt::time::{FormatTime, SystemTime};
use tracing_subscriber::fmt::{FmtContext, FormatEvent, FormatFields};
use tracing_subscriber::registry::LookupSpan;

thread_local! {
    /// `Some(_)` while [`JsonFields`] formats one field: a `Json` being formatted leaves
    /// its value here instead of writing text.
    static CAPTURE: RefCell<Option<Option<Value>>> = const { RefCell::new(None) };
}

/// A log field that the JSON format writes as a JSON value: `tools = ?Json(&names)`.
pub struct Json<T>(pub T);

impl<T: Serialize> fmt::Debug for Json<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let value = serde_json::to_value(&self.0).unwrap_or(Value::Null);
        let leftover = CAPTURE.with(|slot| match slot.borrow_mut().as_mut() {
            Some(captured) => {
                *captured = Some(value);
                None
            }
            None => Some(value),
        });
        match leftover {
            Some(value) => write!(f, "{value}"),
            None => Ok(()),
        }
    }
}

/// The fields of one event as a JSON object.
#[derive(Default)]
pub struct JsonFields(pub Map<String, Value>);

impl Visit for JsonFields {
    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        CAPTURE.with(|slot| *slot.borrow_mut() = Some(None));
        let text = format!("{value:?}");
        let captured = CAPTURE.with(|slot| slot.borrow_mut().take()).flatten();
        self.0.insert(
            field.name().to_string(),
            captured.unwrap_or(Value::String(text)),
        );
    }
    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.insert(field.name().to_string(), value.into());
    }
    fn record_i64(&mut self, field: &Field, value: i64) {
        self.0.insert(field.name().to_string(), value.into());
    }
    fn record_u64(&mut self, field: &Field, value: u64) {
        self.0.insert(field.name().to_string(), value.into());
    }
    fn record_f64(&mut self, field: &Field, value: f64) {
        self.0.insert(field.name().to_string(), value.into());
    }
    fn record_bool(&mut self, field: &Field, value: bool) {
        self.0.insert(field.name().to_string(), value.into());
    }
    fn record_error(&mut self, field: &Field, value: &(dyn std::error::Error + 'static)) {
        self.0
            .insert(field.name().to_string(), value.to_string().into());
    }
}

/// The event formatter for `--log-format json`: `{"timestamp", "level", "target",
/// "fields": {…}, "spans": [names]}` (spans only inside one), like tracing-subscriber's.
pub struct JsonLines;

impl<S, N> FormatEvent<S, N> for JsonLines
where
    S: Subscriber + for<'a> LookupSpan<'a>,
    N: for<'a> FormatFields<'a> + 'static,
{
    fn format_event(
        &self,
        ctx: &FmtContext<'_, S, N>,
        mut writer: Writer<'_>,
        event: &Event<'_>,
    ) -> fmt::Result {
        let mut timestamp = String::new();
        SystemTime.format_time(&mut Writer::new(&mut timestamp))?;
        let meta = event.metadata();
        let mut fields = JsonFields::default();
        event.record(&mut fields);
        let mut line = Map::new();
        line.insert("timestamp".into(), timestamp.into());
        line.insert("level".into(), meta.level().to_string().into());
        line.insert("target".into(), meta.target().into());
        line.insert("fields".into(), Value::Object(fields.0));
        if let Some(scope) = ctx.event_scope() {
            let spans: Vec<Value> = scope.from_root().map(|s| s.name().into()).collect();
            line.insert("spans".into(), spans.into());
        }
        writeln!(writer, "{}", Value::Object(line))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_prints_compact_json_outside_the_formatter() {
        assert_eq!(format!("{:?}", Json(["a", "b\"c"])), r#"["a","b\"c"]"#);
        assert_eq!(format!("{:?}", Json(3)), "3");
    }

    #[test]
    fn the_visitor_captures_values_and_keeps_other_debug_text() {
        use std::sync::{Arc, Mutex};
        use tracing_subscriber::layer::SubscriberExt;
        let out = Arc::new(Mutex::new(Vec::<u8>::new()));
        let sink = out.clone();
        let layer = tracing_subscriber::fmt::layer()
            .event_format(JsonLines)
            .with_writer(move || SinkWriter(sink.clone()));
        let subscriber = tracing_subscriber::registry().with(layer);
        tracing::subscriber::with_default(subscriber, || {
            tracing::info!(
                tools = ?Json(["bash", "view"]),
                plain = ?vec!["x"],
                count = 3u64,
                shown = %"[1]",
                "started"
            );
        });
        let text = String::from_utf8(out.lock().unwrap().clone()).unwrap();
        let line: Value = serde_json::from_str(text.trim()).unwrap();
        let fields = &line["fields"];
        assert_eq!(fields["tools"], serde_json::json!(["bash", "view"]));
        assert_eq!(fields["plain"], Value::String(r#"["x"]"#.into()));
        assert_eq!(fields["count"], serde_json::json!(3));
        assert_eq!(fields["shown"], Value::String("[1]".into()));
        assert_eq!(fields["message"], Value::String("started".into()));
        assert_eq!(line["level"], Value::String("INFO".into()));
    }

    struct SinkWriter(std::sync::Arc<std::sync::Mutex<Vec<u8>>>);
    impl std::io::Write for SinkWriter {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
}
