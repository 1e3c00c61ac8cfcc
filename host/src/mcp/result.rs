//! What a call of an external tool gives: its result as JSON for the model
//! or a script, or why there is none.

use serde_json::Value;
use std::time::Duration;

/// Why a call of an external tool produced no result.
#[derive(Debug, Clone, thiserror::Error)]
pub enum McpCallError {
    /// The tool answered with `isError`.
    #[error("failed: {0}")]
    Tool(String),
    /// The server did not answer within the call timeout.
    #[error("timed out after {}: {details}", crate::util::text::human_duration(*.after))]
    Timeout { after: Duration, details: String },
    /// The server could not be started, died, or broke the protocol.
    #[error("failed: {0}")]
    Server(String),
    /// The result is over the tool's output limit.
    #[error("{0}")]
    TooLarge(String),
}

/// A tool result as JSON for the model or a script: the structured content
/// when the tool gave one, else its text; images, audio and binary
/// resources are described, not inlined. `isError` becomes an error.
pub fn result_value(result: &rmcp::model::CallToolResult) -> Result<Value, McpCallError> {
    let value = serde_json::to_value(result)
        .map_err(|e| McpCallError::Server(format!("its result cannot be read: {e}")))?;
    let text = value
        .get("content")
        .and_then(Value::as_array)
        .map(|blocks| {
            blocks
                .iter()
                .map(describe_block)
                .collect::<Vec<_>>()
                .join("\n")
        })
        .unwrap_or_default();
    if result.is_error == Some(true) {
        return Err(McpCallError::Tool(if text.is_empty() {
            "the tool reported an error without a message".into()
        } else {
            text
        }));
    }
    Ok(match &result.structured_content {
        Some(structured) => structured.clone(),
        None => Value::String(text),
    })
}

/// One content block as text.
fn describe_block(block: &Value) -> String {
    let field = |name: &str| block.get(name).and_then(Value::as_str).unwrap_or("");
    match field("type") {
        "text" => field("text").to_string(),
        "image" | "audio" => format!(
            "[{} {}, {} bytes of base64 not shown]",
            field("type"),
            field("mimeType"),
            field("data").len()
        ),
        "resource" => {
            let resource = block.get("resource").cloned().unwrap_or_default();
            let uri = resource.get("uri").and_then(Value::as_str).unwrap_or("");
            match resource.get("text").and_then(Value::as_str) {
                Some(text) => format!("[resource {uri}]\n{text}"),
                None => format!("[resource {uri}: binary, not shown]"),
            }
        }
        "resource_link" => format!("[resource link {} ({})]", field("uri"), field("name")),
        other => format!("[{other} content not shown]"),
    }
}
