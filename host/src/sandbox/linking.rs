//! What a cell's component may import, put in a linker: every interface
//! toolcell provides (a process that serves many tools), or only those one
//! component imports (a one-call process, where linking all of WASI was a
//! sixth of its start-up).
//!
//! [`INTERFACES`] is the one list of what toolcell provides: WASI 0.2 as
//! `wasmtime_wasi` links it, with the file system replaced by the guarded
//! one ([`fs_guard`]), `wasi:http`, and `toolcell:tool`'s own imports. What
//! each cell may actually do is decided by its context (see `cell`), not
//! by what is linked.

use super::bindings;
use super::cell::CellState;
use super::fs_guard;
use wasmtime::component::{HasData, Linker, ResourceTable};
use wasmtime::{Engine, component::Component};
use wasmtime_wasi::cli::{WasiCli, WasiCliView};
use wasmtime_wasi::clocks::{WasiClocks, WasiClocksView};
use wasmtime_wasi::p2::bindings as wasi;
use wasmtime_wasi::random::{WasiRandom, WasiRandomView};
use wasmtime_wasi::sockets::{WasiSockets, WasiSocketsView};
use wasmtime_wasi::{WasiView, p2::bindings::LinkOptions};
use wasmtime_wasi_http::p2::bindings::LinkOptions as HttpLinkOptions;
use wasmtime_wasi_http::p2::bindings::http as wasi_http;
use wasmtime_wasi_http::{WasiHttp, WasiHttpView};

type Link = fn(&mut Linker<CellState>) -> wasmtime::Result<()>;

/// `wasi:io`'s host side reaches only the cell's resource table.
struct IoTable;

impl HasData for IoTable {
    type Data<'a> = &'a mut ResourceTable;
}

fn io_table(state: &mut CellState) -> &mut ResourceTable {
    state.ctx().table
}

/// Every interface a component may import, by its name without the
/// version, and how to link it.
const INTERFACES: &[(&str, Link)] = &[
    ("wasi:io/error", |l| {
        wasi::io::error::add_to_linker::<_, IoTable>(l, io_table)
    }),
    ("wasi:io/poll", |l| {
        wasi::io::poll::add_to_linker::<_, IoTable>(l, io_table)
    }),
    ("wasi:io/streams", |l| {
        wasi::io::streams::add_to_linker::<_, IoTable>(l, io_table)
    }),
    ("wasi:clocks/wall-clock", |l| {
        wasi::clocks::wall_clock::add_to_linker::<_, WasiClocks>(
            l,
            <CellState as WasiClocksView>::clocks,
        )
    }),
    ("wasi:clocks/monotonic-clock", |l| {
        wasi::clocks::monotonic_clock::add_to_linker::<_, WasiClocks>(
            l,
            <CellState as WasiClocksView>::clocks,
        )
    }),
    // The guarded file system, never wasmtime_wasi's own.
    ("wasi:filesystem/types", |l| {
        wasi::filesystem::types::add_to_linker::<_, fs_guard::Guarded>(l, CellState::guarded_fs)
    }),
    ("wasi:filesystem/preopens", |l| {
        wasi::filesystem::preopens::add_to_linker::<_, fs_guard::Guarded>(l, CellState::guarded_fs)
    }),
    ("wasi:random/random", |l| {
        wasi::random::random::add_to_linker::<_, WasiRandom>(
            l,
            <CellState as WasiRandomView>::random,
        )
    }),
    ("wasi:random/insecure", |l| {
        wasi::random::insecure::add_to_linker::<_, WasiRandom>(
            l,
            <CellState as WasiRandomView>::random,
        )
    }),
    ("wasi:random/insecure-seed", |l| {
        wasi::random::insecure_seed::add_to_linker::<_, WasiRandom>(
            l,
            <CellState as WasiRandomView>::random,
        )
    }),
    ("wasi:cli/exit", |l| {
        wasi::cli::exit::add_to_linker::<_, WasiCli>(l, <CellState as WasiCliView>::cli)
    }),
    ("wasi:cli/environment", |l| {
        wasi::cli::environment::add_to_linker::<_, WasiCli>(l, <CellState as WasiCliView>::cli)
    }),
    ("wasi:cli/stdin", |l| {
        wasi::cli::stdin::add_to_linker::<_, WasiCli>(l, <CellState as WasiCliView>::cli)
    }),
    ("wasi:cli/stdout", |l| {
        wasi::cli::stdout::add_to_linker::<_, WasiCli>(l, <CellState as WasiCliView>::cli)
    }),
    ("wasi:cli/stderr", |l| {
        wasi::cli::stderr::add_to_linker::<_, WasiCli>(l, <CellState as WasiCliView>::cli)
    }),
    ("wasi:cli/terminal-input", |l| {
        wasi::cli::terminal_input::add_to_linker::<_, WasiCli>(l, <CellState as WasiCliView>::cli)
    }),
    ("wasi:cli/terminal-output", |l| {
        wasi::cli::terminal_output::add_to_linker::<_, WasiCli>(l, <CellState as WasiCliView>::cli)
    }),
    ("wasi:cli/terminal-stdin", |l| {
        wasi::cli::terminal_stdin::add_to_linker::<_, WasiCli>(l, <CellState as WasiCliView>::cli)
    }),
    ("wasi:cli/terminal-stdout", |l| {
        wasi::cli::terminal_stdout::add_to_linker::<_, WasiCli>(l, <CellState as WasiCliView>::cli)
    }),
    ("wasi:cli/terminal-stderr", |l| {
        wasi::cli::terminal_stderr::add_to_linker::<_, WasiCli>(l, <CellState as WasiCliView>::cli)
    }),
    ("wasi:sockets/tcp-create-socket", |l| {
        wasi::sockets::tcp_create_socket::add_to_linker::<_, WasiSockets>(
            l,
            <CellState as WasiSocketsView>::sockets,
        )
    }),
    ("wasi:sockets/instance-network", |l| {
        wasi::sockets::instance_network::add_to_linker::<_, WasiSockets>(
            l,
            <CellState as WasiSocketsView>::sockets,
        )
    }),
    ("wasi:sockets/network", |l| {
        let options = LinkOptions::default();
        wasi::sockets::network::add_to_linker::<_, WasiSockets>(
            l,
            &(&options).into(),
            CellState::sockets,
        )
    }),
    ("wasi:sockets/ip-name-lookup", |l| {
        wasi::sockets::ip_name_lookup::add_to_linker::<_, WasiSockets>(
            l,
            <CellState as WasiSocketsView>::sockets,
        )
    }),
    ("wasi:sockets/tcp", |l| {
        wasi::sockets::tcp::add_to_linker::<_, WasiSockets>(
            l,
            <CellState as WasiSocketsView>::sockets,
        )
    }),
    ("wasi:sockets/udp", |l| {
        wasi::sockets::udp::add_to_linker::<_, WasiSockets>(
            l,
            <CellState as WasiSocketsView>::sockets,
        )
    }),
    ("wasi:sockets/udp-create-socket", |l| {
        wasi::sockets::udp_create_socket::add_to_linker::<_, WasiSockets>(
            l,
            <CellState as WasiSocketsView>::sockets,
        )
    }),
    ("wasi:http/outgoing-handler", |l| {
        wasi_http::outgoing_handler::add_to_linker::<_, WasiHttp>(
            l,
            <CellState as WasiHttpView>::http,
        )
    }),
    ("wasi:http/types", |l| {
        let options = HttpLinkOptions::default();
        wasi_http::types::add_to_linker::<_, WasiHttp>(
            l,
            &options.into(),
            <CellState as WasiHttpView>::http,
        )
    }),
    ("toolcell:tool/process", |l| {
        bindings::toolcell::tool::process::add_to_linker::<_, wasmtime::component::HasSelf<_>>(
            l,
            |state: &mut CellState| state,
        )
    }),
    ("toolcell:tool/folders", |l| {
        bindings::toolcell::tool::folders::add_to_linker::<_, wasmtime::component::HasSelf<_>>(
            l,
            |state: &mut CellState| state,
        )
    }),
    ("toolcell:tool/files", |l| {
        bindings::toolcell::tool::files::add_to_linker::<_, wasmtime::component::HasSelf<_>>(
            l,
            |state: &mut CellState| state,
        )
    }),
];

/// A linker with everything toolcell provides, so that components from
/// any toolchain instantiate.
pub fn everything(engine: &Engine) -> wasmtime::Result<Linker<CellState>> {
    let mut linker = Linker::new(engine);
    for (_, link) in INTERFACES {
        link(&mut linker)?;
    }
    Ok(linker)
}

/// A linker with only what `component` imports; `None` if it imports
/// something toolcell does not provide (the full linker then says what).
pub fn only_for(
    engine: &Engine,
    component: &Component,
) -> wasmtime::Result<Option<Linker<CellState>>> {
    let mut linker = Linker::new(engine);
    for (name, _) in component.component_type().imports(engine) {
        let unversioned = name.split_once('@').map_or(name, |(name, _)| name);
        match INTERFACES.iter().find(|(known, _)| *known == unversioned) {
            Some((_, link)) => link(&mut linker)?,
            None => return Ok(None),
        }
    }
    Ok(Some(linker))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sandbox::engine::{Allocation, build_engine};
    use crate::tool::builtin::BUILTIN_TOOLS;

    #[test]
    fn a_builtin_component_links_with_only_its_imports_and_every_name_is_known() {
        let engine = build_engine(Allocation::OnDemand).unwrap();
        let tool = BUILTIN_TOOLS
            .iter()
            .find(|tool| tool.crate_dir == "read_file")
            .unwrap();
        let component = Component::new(&engine, tool.wasm).unwrap();
        let imports: Vec<String> = component
            .component_type()
            .imports(&engine)
            .map(|(name, _)| name.to_string())
            .collect();
        assert!(
            imports
                .iter()
                .any(|name| name.starts_with("wasi:filesystem/types@"))
        );
        let linker = only_for(&engine, &component)
            .unwrap()
            .expect("every interface read_file imports is in the list");
        linker.instantiate_pre(&component).unwrap();
        // And the whole list links as one, without a name twice.
        everything(&engine)
            .unwrap()
            .instantiate_pre(&component)
            .unwrap();
        let mut names: Vec<&str> = INTERFACES.iter().map(|(name, _)| *name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), INTERFACES.len());
    }

    #[test]
    fn a_component_importing_what_is_not_provided_gets_no_short_linker() {
        let engine = build_engine(Allocation::OnDemand).unwrap();
        let component = Component::new(
            &engine,
            r#"(component (import "example:nothing/here@1.0.0" (instance (export "f" (func)))))"#,
        )
        .unwrap();
        assert!(only_for(&engine, &component).unwrap().is_none());
        let error = everything(&engine)
            .unwrap()
            .instantiate_pre(&component)
            .err()
            .expect("the full linker refuses it too");
        assert!(
            format!("{error:#}").contains("example:nothing/here"),
            "{error:#}"
        );
    }
}
