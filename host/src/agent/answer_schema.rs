//! An answer that must be JSON fitting a JSON Schema (`chat
//! --output-schema FILE`, and workflows' `llm_json`): how an answer is read
//! as JSON, and what is wrong with one that does not fit, in words a model
//! can act on. A model that misses is told so in band and answers again.

use serde_json::Value;

/// The most problems of one answer told to the model: enough to fix it,
/// not so many that they crowd out the conversation.
const MAX_PROBLEMS_TOLD: usize = 5;

/// A schema the final answer must fit.
pub struct AnswerSchema {
    schema: Value,
    validator: jsonschema::Validator,
}

impl AnswerSchema {
    /// Refused when `schema` is not a valid JSON Schema.
    pub fn new(schema: Value) -> Result<Self, String> {
        let validator = jsonschema::validator_for(&schema)
            .map_err(|e| format!("it is not a valid JSON Schema: {e}"))?;
        Ok(Self { schema, validator })
    }

    pub fn schema(&self) -> &Value {
        &self.schema
    }

    /// The answer as JSON, when it is JSON (alone, or in one code block)
    /// that fits; else what is wrong with it.
    pub fn check(&self, answer: &str) -> Result<Value, String> {
        let value =
            parse_json_answer(answer).map_err(|e| format!("the answer is not JSON ({e})"))?;
        let mut problems = self.validator.iter_errors(&value).map(|e| {
            let at = e.instance_path().to_string();
            if at.is_empty() {
                e.to_string()
            } else {
                format!("at `{at}`: {e}")
            }
        });
        let told: Vec<String> = problems.by_ref().take(MAX_PROBLEMS_TOLD).collect();
        let more = problems.count();
        if told.is_empty() {
            return Ok(value);
        }
        let mut text = told.join("; ");
        if more > 0 {
            text.push_str(&format!("; and {more} more"));
        }
        Err(text)
    }

    /// What the system prompt says of the answer.
    pub fn prompt_section(&self) -> String {
        format!(
            "\n\nYour final answer (the message in which you call no tool) must be only JSON that fits this JSON Schema, with nothing around it:\n{}",
            self.schema
        )
    }

    /// What the model is told of an answer that did not fit.
    pub fn ask_again(&self, problem: &str) -> String {
        format!(
            "That answer does not fit the required JSON Schema: {problem}. Give the final answer again as only JSON that fits it."
        )
    }
}

/// `text` as JSON: alone, or as the whole of one code block (```json).
pub fn parse_json_answer(text: &str) -> Result<Value, serde_json::Error> {
    let trimmed = text.trim();
    let inner = trimmed
        .strip_prefix("```json")
        .or_else(|| trimmed.strip_prefix("```"))
        .and_then(|t| t.strip_suffix("```"))
        .unwrap_or(trimmed);
    serde_json::from_str(inner.trim())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema() -> AnswerSchema {
        AnswerSchema::new(json!({
            "type": "object",
            "properties": {"count": {"type": "integer"}},
            "required": ["count"],
            "additionalProperties": false
        }))
        .unwrap()
    }

    #[test]
    fn json_that_fits_is_the_answer_alone_or_in_a_code_block() {
        assert_eq!(schema().check(" {\"count\": 3} "), Ok(json!({"count": 3})));
        assert_eq!(
            schema().check("```json\n{\"count\": 4}\n```"),
            Ok(json!({"count": 4}))
        );
    }

    #[test]
    fn what_does_not_fit_says_where_and_why() {
        let e = schema().check("Here it is: 3").unwrap_err();
        assert!(e.starts_with("the answer is not JSON"), "{e}");
        let e = schema().check("{\"count\": \"3\"}").unwrap_err();
        assert!(e.contains("at `/count`"), "{e}");
        let many: String = (0..9).map(|n| format!(",\"x{n}\":1")).collect();
        let e = schema()
            .check(&format!("{{\"count\":1{many}}}"))
            .unwrap_err();
        assert!(
            !e.contains("and "),
            "one problem lists every extra key: {e}"
        );
        let e = AnswerSchema::new(json!({"type": "nope"})).err().unwrap();
        assert!(e.contains("not a valid JSON Schema"), "{e}");
    }
}
