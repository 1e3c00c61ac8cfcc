//! rhai's own operations that go down a value one level at a time through
//! its function dispatch — showing an array or map (`print`, `debug`,
//! `to_string`, `to_debug`, `${…}`, `+` onto a string), comparing two
//! (`==`, `!=`, and `contains`, `in`, `index_of` which use `==`) and
//! `to_json` — re-registered with a depth limit.
//!
//! rhai does not limit how deeply arrays and maps nest, and each of these
//! levels costs about 1.6 KiB of stack: `print` of an array 1,300 levels
//! deep overflowed a 2 MiB thread and aborted the process. The versions
//! here do what rhai's do within [`MAX_VALUE_DEPTH`] levels. Past it, a
//! value is shown with its deeper levels as `[…]` and `#{…}` (showing is
//! for people, and `${…}` would swallow an error and fall back to a
//! formatting of its own that recurses all the way down), while comparing
//! and `to_json` throw a catchable `too-deep` error at the call. They are
//! registered in the engine's global namespace, which rhai searches before
//! its standard packages, including for the calls those packages make.

use super::values::{MAX_VALUE_DEPTH, array_deeper_than, map_deeper_than, too_deep};
use rhai::{
    Array, Dynamic, Engine, EvalAltResult, FUNC_TO_DEBUG, ImmutableString, Map, NativeCallContext,
};
use std::cell::Cell;

type Fallible<T> = Result<T, Box<EvalAltResult>>;

thread_local! {
    /// How many of these operations are under way inside each other on
    /// this thread (a script runs on a thread of its own).
    static LEVEL: Cell<usize> = const { Cell::new(0) };
}

/// One level of a recursive operation; the level ends when it drops.
struct Level;

impl Level {
    /// The next level, unless [`MAX_VALUE_DEPTH`] are under way.
    fn enter() -> Option<Self> {
        let level = LEVEL.with(Cell::get);
        if level >= MAX_VALUE_DEPTH {
            return None;
        }
        LEVEL.with(|l| l.set(level + 1));
        Some(Level)
    }

    /// The next level of a comparison named `name`: the outermost one
    /// measures both values with `too_deep` first, so the error names what
    /// the script wrote; inner ones only count, a backstop.
    fn compare(name: &str, too_deep_values: impl FnOnce() -> bool) -> Fallible<Self> {
        let outermost = LEVEL.with(Cell::get) == 0;
        match Self::enter() {
            Some(level) if !(outermost && too_deep_values()) => Ok(level),
            _ => Err(too_deep(&format!(
                "one of the values compared with `{name}`"
            ))),
        }
    }
}

impl Drop for Level {
    fn drop(&mut self) {
        LEVEL.with(|l| l.set(l.get().saturating_sub(1)));
    }
}

/// `item` in debug form, as rhai shows the items of an array or map.
fn debug_item(ctx: &NativeCallContext, item: &mut Dynamic) -> Fallible<String> {
    match ctx.call_native_fn_raw(FUNC_TO_DEBUG, true, &mut [item]) {
        Ok(shown) if shown.is_string() => Ok(shown.to_string()),
        Ok(shown) => Ok(ctx.engine().map_type_name(shown.type_name()).to_string()),
        // No `to_debug` for its type: never an array or map (they have the
        // ones here), so Rust's own formatting does not recurse.
        Err(e) if matches!(*e, EvalAltResult::ErrorFunctionNotFound(..)) => {
            Ok(ctx.engine().map_type_name(&format!("{item:?}")).to_string())
        }
        Err(e) => Err(e),
    }
}

fn format_array(ctx: &NativeCallContext, array: &mut Array) -> Fallible<String> {
    let Some(_level) = Level::enter() else {
        return Ok("[…]".into());
    };
    let mut text = String::from("[");
    for (i, item) in array.iter_mut().enumerate() {
        if i > 0 {
            text.push_str(", ");
        }
        text.push_str(&debug_item(ctx, item)?);
    }
    text.push(']');
    Ok(text)
}

fn format_map(ctx: &NativeCallContext, map: &mut Map) -> Fallible<String> {
    let Some(_level) = Level::enter() else {
        return Ok("#{…}".into());
    };
    let mut text = String::from("#{");
    for (i, (key, value)) in map.iter_mut().enumerate() {
        if i > 0 {
            text.push_str(", ");
        }
        text.push_str(&format!("{key:?}: {}", debug_item(ctx, value)?));
    }
    text.push('}');
    Ok(text)
}

/// `a == b` for two items, as rhai's array `==` compares them: a missing
/// `==` is `false` between different types and an error for one type.
fn items_equal(ctx: &NativeCallContext, a: &mut Dynamic, b: &mut Dynamic) -> Fallible<bool> {
    let same_type = a.type_id() == b.type_id();
    match ctx.call_native_fn_raw("==", true, &mut [a, b]) {
        Ok(equal) => Ok(equal.as_bool().unwrap_or(false)),
        Err(e) if matches!(*e, EvalAltResult::ErrorFunctionNotFound(..)) && !same_type => Ok(false),
        Err(e) => Err(e),
    }
}

fn arrays_equal(
    ctx: &NativeCallContext,
    name: &str,
    a: &mut Array,
    mut b: Array,
) -> Fallible<bool> {
    let _level = Level::compare(name, || {
        array_deeper_than(a, MAX_VALUE_DEPTH) || array_deeper_than(&b, MAX_VALUE_DEPTH)
    })?;
    if a.len() != b.len() {
        return Ok(false);
    }
    for (x, y) in a.iter_mut().zip(b.iter_mut()) {
        if !items_equal(ctx, x, y)? {
            return Ok(false);
        }
    }
    Ok(true)
}

fn maps_equal(ctx: &NativeCallContext, name: &str, a: &mut Map, mut b: Map) -> Fallible<bool> {
    let _level = Level::compare(name, || {
        map_deeper_than(a, MAX_VALUE_DEPTH) || map_deeper_than(&b, MAX_VALUE_DEPTH)
    })?;
    if a.len() != b.len() {
        return Ok(false);
    }
    for (key, x) in a.iter_mut() {
        let Some(y) = b.get_mut(key) else {
            return Ok(false);
        };
        let equal = ctx.call_native_fn_raw("==", true, &mut [x, y])?;
        if !equal.as_bool().unwrap_or(false) {
            return Ok(false);
        }
    }
    Ok(true)
}

/// Registers the depth-limited versions on `engine`.
pub fn register(engine: &mut Engine) {
    for name in ["print", "debug", "to_string", "to_debug"] {
        engine.register_fn(
            name,
            move |ctx: NativeCallContext, array: &mut Array| -> Fallible<ImmutableString> {
                format_array(&ctx, array).map(Into::into)
            },
        );
        engine.register_fn(
            name,
            move |ctx: NativeCallContext, map: &mut Map| -> Fallible<ImmutableString> {
                format_map(&ctx, map).map(Into::into)
            },
        );
    }
    engine.register_fn("==", |ctx: NativeCallContext, a: &mut Array, b: Array| {
        arrays_equal(&ctx, "==", a, b)
    });
    engine.register_fn("!=", |ctx: NativeCallContext, a: &mut Array, b: Array| {
        arrays_equal(&ctx, "!=", a, b).map(|equal| !equal)
    });
    engine.register_fn("==", |ctx: NativeCallContext, a: &mut Map, b: Map| {
        maps_equal(&ctx, "==", a, b)
    });
    engine.register_fn("!=", |ctx: NativeCallContext, a: &mut Map, b: Map| {
        maps_equal(&ctx, "!=", a, b).map(|equal| !equal)
    });
    engine.register_fn("to_json", |map: &mut Map| -> Fallible<String> {
        if map_deeper_than(map, MAX_VALUE_DEPTH) {
            return Err(too_deep("the value given to `to_json`"));
        }
        Ok(rhai::format_map_as_json(map))
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use rhai::Scope;

    const SCRIPTS: &[&str] = &[
        r#"let a = [1, "two", 3.5, [#{x: ()}], 'c', true]; a.to_string()"#,
        r#"let m = #{b: [1, 2], a: "x"}; `${m} ${m.to_debug()} ${[m].to_debug()}`"#,
        r#"let a = [1, [2, #{k: "v"}]]; [a == [1, [2, #{k: "v"}]], a != a, a == [1], [1] == [1.0]]"#,
        r#"let m = #{a: [1, #{b: 2}]}; [m == #{a: [1, #{b: 2}]}, m != #{a: [1]}, m.to_json()]"#,
        r#"let a = [[1], [2]]; [a.contains([2]), a.index_of([2]), [3] in a, "x" + [1, 2]]"#,
    ];

    fn eval(engine: &Engine, script: &str) -> String {
        engine
            .eval::<Dynamic>(script)
            .map(|v| format!("{v:?}"))
            .unwrap_or_else(|e| format!("error: {e}"))
    }

    #[test]
    fn within_the_limit_values_print_and_compare_as_rhai_s_own_do() {
        let stock = Engine::new();
        let mut limited = Engine::new();
        register(&mut limited);
        for script in SCRIPTS {
            assert_eq!(eval(&limited, script), eval(&stock, script), "{script}");
        }
    }

    /// An array `depth` levels deep, built without recursion.
    fn nested(depth: usize) -> Dynamic {
        let mut value = Dynamic::from_array(Array::new());
        for _ in 1..depth {
            value = Dynamic::from_array(vec![value]);
        }
        value
    }

    // Regression: rhai's own `print` of an array 1,300 levels deep overflowed
    // a 2 MiB stack (this test thread's) and aborted the process.
    #[test]
    fn a_value_past_the_limit_is_shown_cut_and_refused_in_comparisons() {
        let mut engine = Engine::new();
        register(&mut engine);
        let cut = format!(
            "{}[…]{}",
            "[".repeat(MAX_VALUE_DEPTH),
            "]".repeat(MAX_VALUE_DEPTH)
        );
        for script in [
            "deep.to_string()",
            "`${deep}`",
            "\"\" + deep",
            "deep.to_debug()",
        ] {
            let mut scope = Scope::new();
            scope.push("deep", nested(2_000));
            let text = engine
                .eval_with_scope::<String>(&mut scope, script)
                .unwrap();
            assert_eq!(text, cut, "{script}");
        }
        let mut scope = Scope::new();
        scope.push("deep", nested(2_000));
        let map = engine
            .eval_with_scope::<String>(
                &mut scope,
                "let m = #{}; for i in 0..200 { m = #{a: m}; } m.to_string()",
            )
            .unwrap();
        assert!(map.contains("#{…}") && map.len() < 200 * 8, "{map}");
        for (script, name) in [
            ("deep == deep", "=="),
            ("[1] != deep", "!="),
            ("[deep].contains(deep)", "=="),
            ("#{a: deep} == #{a: deep}", "=="),
            ("#{a: deep}.to_json()", "to_json"),
        ] {
            let mut scope = Scope::new();
            scope.push("deep", nested(2_000));
            let error = engine
                .eval_with_scope::<Dynamic>(&mut scope, script)
                .expect_err(script);
            let EvalAltResult::ErrorRuntime(thrown, pos) = *error else {
                panic!("{script}: not a catchable error: {error}");
            };
            let message = thrown.cast::<Map>()["message"].to_string();
            assert!(
                message.starts_with("arrays and maps nest deeper than 128 levels in ")
                    && message.contains(&format!("`{name}`")),
                "{script}: {message}"
            );
            assert_eq!(pos.line(), Some(1), "{script}: the error is at the call");
            assert_eq!(LEVEL.with(Cell::get), 0, "{script}: every level ended");
        }
        // At the limit, values still compare and print whole.
        let mut scope = Scope::new();
        scope.push("deep", nested(MAX_VALUE_DEPTH));
        let (text, equal) = engine
            .eval_with_scope::<Array>(&mut scope, "[deep.to_string(), deep == deep]")
            .map(|a| (a[0].to_string(), a[1].as_bool().unwrap()))
            .unwrap();
        assert_eq!(text.len(), 2 * MAX_VALUE_DEPTH);
        assert!(equal);
    }
}
