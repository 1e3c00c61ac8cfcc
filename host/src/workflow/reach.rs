//! What a workflow may call, read from its script without running it: the
//! tools it names, when every call names its tool as a literal. A script
//! that could reach a tool it does not name — an agent (which picks its own
//! tools), a tool named by a variable, a function pointer, an imported
//! module — reaches what cannot be known before it runs.

use rhai::{AST, ASTNode, Expr, Stmt};
use std::collections::BTreeSet;

/// Functions through which a script reaches tools it does not name: the
/// agent (which picks its own), and rhai's own ways of calling a function
/// by a name made at run time.
const REACHES_UNNAMED: [&str; 5] = ["agent", "Fn", "call", "curry", "eval"];

/// The tools a script may call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reach {
    /// Exactly these, named as literals.
    Named(BTreeSet<String>),
    /// Not known before it runs; the reason, for messages.
    Unknown(String),
}

/// What `ast` may call.
pub fn tools_reached(ast: &AST) -> Reach {
    let mut named = BTreeSet::new();
    let mut unknown: Option<String> = None;
    ast.walk(&mut |path: &[ASTNode]| {
        let call = match path.last() {
            Some(ASTNode::Expr(Expr::FnCall(call, _) | Expr::MethodCall(call, _))) => call,
            Some(ASTNode::Stmt(Stmt::FnCall(call, _))) => call,
            Some(ASTNode::Stmt(Stmt::Import(..))) => {
                unknown = Some("it imports modules".into());
                return false;
            }
            _ => return true,
        };
        let name = call.name.as_str();
        if name == "tool" {
            match path.last() {
                Some(ASTNode::Expr(Expr::MethodCall(..))) => {
                    unknown = Some("it calls tool() as a method".into());
                    return false;
                }
                _ => match call.args.first() {
                    Some(Expr::StringConstant(tool, _)) => {
                        named.insert(tool.to_string());
                    }
                    _ => {
                        unknown = Some("it names a tool by a value made at run time".into());
                        return false;
                    }
                },
            }
        } else if REACHES_UNNAMED.contains(&name) {
            unknown = Some(format!("it calls {name}()"));
            return false;
        }
        true
    });
    match unknown {
        Some(why) => Reach::Unknown(why),
        None => Reach::Named(named),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reach(script: &str) -> Reach {
        tools_reached(&rhai::Engine::new().compile(script).expect("compiles"))
    }

    fn named(tools: &[&str]) -> Reach {
        Reach::Named(tools.iter().map(|t| t.to_string()).collect())
    }

    #[test]
    fn literal_calls_are_named() {
        assert_eq!(
            reach("let a = tool(\"read_file\", #{path: \"x\"}); tool(\"list_directory\");"),
            named(&["list_directory", "read_file"])
        );
        assert_eq!(
            reach("fn f() { tool(\"search_files\", #{}) } f()"),
            named(&["search_files"])
        );
        assert_eq!(reach("print(1 + 1)"), named(&[]));
    }

    #[test]
    fn what_a_script_reaches_unnamed_is_unknown() {
        for script in [
            "let t = \"write_file\"; tool(t, #{})",
            "agent(\"tidy up\")",
            "let f = Fn(\"tool\"); f.call(\"write_file\")",
            "import \"helpers\" as h;",
            "\"write_file\".tool()",
            "eval(\"tool(`write_file`)\")",
        ] {
            assert!(
                matches!(reach(script), Reach::Unknown(_)),
                "{script} reaches tools it does not name"
            );
        }
    }
}
