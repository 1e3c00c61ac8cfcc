//! Stopping a model that repeats itself: the same call (tool and arguments)
//! asked for several times in a row will not give a different result.

use serde_json::Value;

/// Identical calls in a row that run; the next identical one is refused.
pub const MAX_IDENTICAL_CALLS: u32 = 2;

/// Remembers the last call and how often it came in a row.
#[derive(Debug, Default)]
pub struct RepeatGuard {
    last: Option<(String, String)>,
    count: u32,
}

impl RepeatGuard {
    /// Counts `name(args)`; returns the message for the model when it is
    /// one repeat too many.
    pub fn check(&mut self, name: &str, args: &Value) -> Option<String> {
        // serde_json's maps are sorted, so equal arguments print equally.
        let key = (name.to_string(), args.to_string());
        if self.last.as_ref() == Some(&key) {
            self.count += 1;
        } else {
            self.last = Some(key);
            self.count = 1;
        }
        (self.count > MAX_IDENTICAL_CALLS).then(|| {
            format!(
                "this is call number {} in a row of `{name}` with the same arguments; it was not run, because the result will not change. Use the result you already have, change the arguments, or answer the user.",
                self.count
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn third_identical_call_in_a_row_is_stopped() {
        let mut guard = RepeatGuard::default();
        let args = json!({"path": "a", "x": 1});
        assert!(guard.check("read_file", &args).is_none());
        assert!(
            guard
                .check("read_file", &json!({"x": 1, "path": "a"}))
                .is_none()
        );
        assert!(guard.check("read_file", &args).is_some());
        assert!(guard.check("list_directory", &args).is_none());
        assert!(guard.check("read_file", &args).is_none());
    }
}
