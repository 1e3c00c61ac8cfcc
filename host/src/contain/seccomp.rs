//! A seccomp filter for the programs toolcell starts: the system calls no
//! granted program needs, refused with `EPERM` (the program sees an
//! ordinary error and goes on), everything else allowed.
//!
//! Refused: tracing and reading other processes (`ptrace`,
//! `process_vm_readv`), the kernel's own controls (modules, `kexec`, `bpf`,
//! `perf_event_open`, `reboot`, the clock, swap, accounting, `syslog`),
//! leaving the session (`setsid`; and the process group, `setpgid`, where
//! the program has no mounts of its own), limits and priorities of other processes
//! (`prlimit64` and the scheduler calls unless on itself),
//! mounting and new namespaces (`mount`, `unshare`, `setns`, `clone` with a
//! namespace flag; `clone3`, whose flags a filter cannot read, answers
//! `ENOSYS` so the C library falls back to `clone`), file handles that skip
//! path checks (`open_by_handle_at`), the kernel keyring, `userfaultfd`,
//! `io_uring` (which runs system calls the filter never sees), typing
//! into a terminal (`ioctl` `TIOCSTI`, `TIOCLINUX`), and the other system
//! call tables (32-bit and x32 calls on x86-64). Without a network grant,
//! `socket` too (`EACCES`): no socket of any family, so neither the
//! network nor the UNIX sockets of local services; `socketpair` stays, for
//! pipes between a program's own processes. With hosts granted, only TCP,
//! UDP, UNIX and routing netlink sockets ([`Sockets::Internet`]), to
//! connect out: no `listen`. System V IPC (`shm*`, `msg*`, `sem*`), which
//! is the user's across every process, not a path's. Where the
//! program has no mounts of its own, the calls that change a file's mode,
//! owner, times or attributes by path ([`BY_PATH`]).
//!
//! The program is built in toolcell; the child installs it with one
//! `prctl` ([`install`]) after `no_new_privs`.

use libc::sock_filter;

/// `AUDIT_ARCH_*` of `linux/audit.h`: the system call table a call used.
#[cfg(target_arch = "x86_64")]
const NATIVE_ARCH: u32 = 0xC000_003E;
#[cfg(target_arch = "aarch64")]
const NATIVE_ARCH: u32 = 0xC000_00B7;
/// x32 calls on x86-64 carry this bit in their number.
#[cfg(target_arch = "x86_64")]
const X32_SYSCALL_BIT: u32 = 0x4000_0000;

/// Offsets in `struct seccomp_data`: the call's number, its table, and the
/// low 32 bits of its first and second arguments (little-endian).
const NR: u32 = 0;
const ARCH: u32 = 4;
const ARG0_LOW: u32 = 16;
const ARG1_LOW: u32 = 24;

/// The namespace flags of `clone`.
const CLONE_NEW_ANY: u32 = (libc::CLONE_NEWNS
    | libc::CLONE_NEWUSER
    | libc::CLONE_NEWNET
    | libc::CLONE_NEWPID
    | libc::CLONE_NEWIPC
    | libc::CLONE_NEWUTS
    | libc::CLONE_NEWCGROUP) as u32;

/// The calls refused with `EPERM` on every architecture.
const REFUSED: &[libc::c_long] = &[
    libc::SYS_ptrace,
    libc::SYS_process_vm_readv,
    libc::SYS_process_vm_writev,
    libc::SYS_mount,
    libc::SYS_umount2,
    libc::SYS_pivot_root,
    libc::SYS_chroot,
    libc::SYS_fsopen,
    libc::SYS_fsconfig,
    libc::SYS_fsmount,
    libc::SYS_fspick,
    libc::SYS_move_mount,
    libc::SYS_open_tree,
    libc::SYS_mount_setattr,
    libc::SYS_unshare,
    libc::SYS_setns,
    libc::SYS_init_module,
    libc::SYS_finit_module,
    libc::SYS_delete_module,
    libc::SYS_kexec_load,
    libc::SYS_kexec_file_load,
    libc::SYS_bpf,
    libc::SYS_perf_event_open,
    libc::SYS_userfaultfd,
    libc::SYS_keyctl,
    libc::SYS_add_key,
    libc::SYS_request_key,
    libc::SYS_open_by_handle_at,
    libc::SYS_name_to_handle_at,
    libc::SYS_io_uring_setup,
    libc::SYS_io_uring_enter,
    libc::SYS_io_uring_register,
    libc::SYS_reboot,
    libc::SYS_swapon,
    libc::SYS_swapoff,
    libc::SYS_acct,
    libc::SYS_settimeofday,
    libc::SYS_clock_settime,
    libc::SYS_clock_adjtime,
    libc::SYS_adjtimex,
    libc::SYS_syslog,
    libc::SYS_quotactl,
    libc::SYS_vhangup,
    // Leaving the session: with it, the process group toolcell ends a
    // program's processes by (toolcell sets it before the filter). Moving
    // to another group of the session (`setpgid`, which ninja and
    // `timeout` use) is refused only where the program has no mounts of
    // its own: a process left running then could change toolcell's files
    // after the check that follows the call; with the mounts it cannot.
    libc::SYS_setsid,
    // System V shared memory, message queues and semaphores: keyed
    // per user, not per path, so neither Landlock nor the mounts keep a
    // program from another process's (a segment of the user's session,
    // a queue an outside process reads). POSIX shared memory (files in
    // `/dev/shm`) goes through the file rules instead.
    libc::SYS_shmget,
    libc::SYS_shmat,
    libc::SYS_shmdt,
    libc::SYS_shmctl,
    libc::SYS_msgget,
    libc::SYS_msgsnd,
    libc::SYS_msgrcv,
    libc::SYS_msgctl,
    libc::SYS_semget,
    libc::SYS_semop,
    libc::SYS_semtimedop,
    libc::SYS_semctl,
];

/// x86-64 only: port I/O.
#[cfg(target_arch = "x86_64")]
const REFUSED_HERE: &[libc::c_long] = &[libc::SYS_iopl, libc::SYS_ioperm];
#[cfg(not(target_arch = "x86_64"))]
const REFUSED_HERE: &[libc::c_long] = &[];

fn statement(code: u32, k: u32) -> sock_filter {
    sock_filter {
        code: code as u16,
        jt: 0,
        jf: 0,
        k,
    }
}

fn jump(code: u32, k: u32, jt: u8, jf: u8) -> sock_filter {
    sock_filter {
        code: code as u16,
        jt,
        jf,
        k,
    }
}

const LOAD: u32 = libc::BPF_LD | libc::BPF_W | libc::BPF_ABS;
const RETURN: u32 = libc::BPF_RET | libc::BPF_K;
const IF_EQUAL: u32 = libc::BPF_JMP | libc::BPF_JEQ | libc::BPF_K;
const IF_AT_LEAST: u32 = libc::BPF_JMP | libc::BPF_JGE | libc::BPF_K;
const IF_ANY_BIT: u32 = libc::BPF_JMP | libc::BPF_JSET | libc::BPF_K;

fn refuse(errno: i32) -> sock_filter {
    statement(RETURN, libc::SECCOMP_RET_ERRNO | errno as u32)
}

fn allow() -> sock_filter {
    statement(RETURN, libc::SECCOMP_RET_ALLOW)
}

/// Which sockets a program may make.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sockets {
    /// None at all (`socketpair` stays).
    None,
    /// A granted hosts' worth: TCP (protocol 0 or 6, not MPTCP or SCTP),
    /// UDP (the resolver needs it), UNIX sockets, and routing netlink
    /// (which `getaddrinfo` asks); Landlock then limits TCP to the ports.
    Internet,
    /// Any.
    Any,
}

/// Calls that change a file's mode, owner, times or extended attributes,
/// which Landlock does not confine (a file opened only for reading can be
/// made world-readable through its descriptor): refused where the mount
/// namespace that makes everything but the grants read-only is not
/// available. With them, `setpgid` (see [`program`]).
const BY_PATH: &[libc::c_long] = &[
    libc::SYS_fchmod,
    libc::SYS_fchown,
    libc::SYS_fsetxattr,
    libc::SYS_fremovexattr,
    libc::SYS_setpgid,
    libc::SYS_fchmodat,
    libc::SYS_fchownat,
    libc::SYS_setxattr,
    libc::SYS_lsetxattr,
    libc::SYS_removexattr,
    libc::SYS_lremovexattr,
    SYS_FCHMODAT2,
    SYS_SETXATTRAT,
    SYS_REMOVEXATTRAT,
];
/// Newer than the C library's tables: the numbers are the same on x86-64
/// and aarch64 (the unified table).
const SYS_FCHMODAT2: libc::c_long = 452;
const SYS_SETXATTRAT: libc::c_long = 463;
const SYS_REMOVEXATTRAT: libc::c_long = 466;
/// x86-64's older forms of the same.
#[cfg(target_arch = "x86_64")]
const BY_PATH_HERE: &[libc::c_long] = &[
    libc::SYS_chmod,
    libc::SYS_chown,
    libc::SYS_lchown,
    libc::SYS_utime,
    libc::SYS_utimes,
    libc::SYS_futimesat,
];
#[cfg(not(target_arch = "x86_64"))]
const BY_PATH_HERE: &[libc::c_long] = &[];

/// Calls on another process that need no tracing permission: its resource
/// limits (`prlimit64` can starve or stop toolcell), its scheduling and
/// I/O priority. Refused unless they name the caller itself: each entry is
/// a call, an argument and the one value it may have (pid `0`; for
/// `setpriority` and `ioprio_set`, also "a process", not a group or user).
const ON_ANOTHER: &[(libc::c_long, u32, u32)] = &[
    (libc::SYS_prlimit64, ARG0_LOW, 0),
    (libc::SYS_sched_setaffinity, ARG0_LOW, 0),
    (libc::SYS_sched_setscheduler, ARG0_LOW, 0),
    (libc::SYS_sched_setparam, ARG0_LOW, 0),
    (libc::SYS_sched_setattr, ARG0_LOW, 0),
    (libc::SYS_setpriority, ARG0_LOW, libc::PRIO_PROCESS),
    (libc::SYS_setpriority, ARG1_LOW, 0),
    (libc::SYS_ioprio_set, ARG0_LOW, IOPRIO_WHO_PROCESS),
    (libc::SYS_ioprio_set, ARG1_LOW, 0),
];
/// `linux/ioprio.h`.
const IOPRIO_WHO_PROCESS: u32 = 1;

/// The filter: refuse what is listed above; sockets as `sockets` says;
/// with `by_path`, also the metadata calls of [`BY_PATH`].
pub fn program(sockets: Sockets, by_path: bool) -> Vec<sock_filter> {
    let mut p = vec![
        statement(LOAD, ARCH),
        // Another table: refused whole.
        jump(IF_EQUAL, NATIVE_ARCH, 1, 0),
        refuse(libc::EPERM),
        statement(LOAD, NR),
    ];
    #[cfg(target_arch = "x86_64")]
    p.extend([
        jump(IF_AT_LEAST, X32_SYSCALL_BIT, 0, 1),
        refuse(libc::EPERM),
    ]);
    // Each refused call: "if equal, fall through to the refusal, else skip it".
    let mut refuse_call = |nr: libc::c_long, errno: i32| {
        p.extend([jump(IF_EQUAL, nr as u32, 0, 1), refuse(errno)]);
    };
    for &nr in REFUSED.iter().chain(REFUSED_HERE) {
        refuse_call(nr, libc::EPERM);
    }
    refuse_call(libc::SYS_clone3, libc::ENOSYS);
    match sockets {
        Sockets::None => refuse_call(libc::SYS_socket, libc::EACCES),
        // Hosts granted are for connecting out. `listen` on a socket never
        // bound binds it to a port the kernel picks, on every address,
        // without the `bind` Landlock checks: a server anyone could reach.
        Sockets::Internet => refuse_call(libc::SYS_listen, libc::EACCES),
        Sockets::Any => {}
    }
    if by_path {
        for &nr in BY_PATH.iter().chain(BY_PATH_HERE) {
            refuse_call(nr, libc::EPERM);
        }
    }
    // From here each section loads what it tests, starting with the
    // call's number.
    // clone: refused with a namespace flag.
    p.extend([
        jump(IF_EQUAL, libc::SYS_clone as u32, 0, 3),
        statement(LOAD, ARG0_LOW),
        jump(IF_ANY_BIT, CLONE_NEW_ANY, 0, 1),
        refuse(libc::EPERM),
    ]);
    // Another process's limits and priorities.
    for &(nr, arg, only) in ON_ANOTHER {
        p.extend([
            statement(LOAD, NR),
            jump(IF_EQUAL, nr as u32, 0, 3),
            statement(LOAD, arg),
            jump(IF_EQUAL, only, 1, 0),
            refuse(libc::EPERM),
        ]);
    }
    if by_path {
        // utimensat with a path (with none, it is futimens on a descriptor).
        p.extend([
            statement(LOAD, NR),
            jump(IF_EQUAL, libc::SYS_utimensat as u32, 0, 5),
            statement(LOAD, ARG1_LOW),
            jump(IF_EQUAL, 0, 0, 2),
            statement(LOAD, ARG1_LOW + 4),
            jump(IF_EQUAL, 0, 1, 0),
            refuse(libc::EPERM),
        ]);
    }
    if sockets == Sockets::Internet {
        p.extend(internet_sockets());
    }
    // ioctl: the two requests that type into a terminal.
    p.extend([
        statement(LOAD, NR),
        jump(IF_EQUAL, libc::SYS_ioctl as u32, 0, 4),
        statement(LOAD, ARG1_LOW),
        jump(IF_EQUAL, libc::TIOCSTI as u32, 1, 0),
        jump(IF_EQUAL, libc::TIOCLINUX as u32, 0, 1),
        refuse(libc::EPERM),
    ]);
    p.push(allow());
    p
}

/// `socket(domain, type, protocol)` for [`Sockets::Internet`]: a block that
/// decides every `socket` call (it ends in a return either way) and is
/// skipped for any other call.
fn internet_sockets() -> Vec<sock_filter> {
    const ARG2_LOW: u32 = 32;
    const TYPE_MASK: u32 = 0xf; // SOCK_NONBLOCK and SOCK_CLOEXEC are above
    let no = refuse(libc::EACCES);
    // "protocol is 0 or `proto`": allow, else refuse (4 instructions after
    // the type test that jumps over them).
    let protocol_block = |proto: i32| {
        [
            statement(LOAD, ARG2_LOW),
            jump(IF_EQUAL, 0, 2, 0),
            jump(IF_EQUAL, proto as u32, 1, 0),
            no,
            allow(),
        ]
    };
    let mut block = vec![
        statement(LOAD, ARG0_LOW),
        jump(IF_EQUAL, libc::AF_UNIX as u32, 0, 1),
        allow(),
        // Routing netlink only.
        jump(IF_EQUAL, libc::AF_NETLINK as u32, 0, 4),
        statement(LOAD, ARG2_LOW),
        jump(IF_EQUAL, libc::NETLINK_ROUTE as u32, 0, 1),
        allow(),
        no,
        jump(IF_EQUAL, libc::AF_INET as u32, 1, 0),
        jump(IF_EQUAL, libc::AF_INET6 as u32, 0, 14),
        statement(LOAD, ARG1_LOW),
        statement(libc::BPF_ALU | libc::BPF_AND | libc::BPF_K, TYPE_MASK),
        jump(IF_EQUAL, libc::SOCK_STREAM as u32, 0, 5),
    ];
    block.extend(protocol_block(libc::IPPROTO_TCP));
    block.push(jump(IF_EQUAL, libc::SOCK_DGRAM as u32, 0, 5));
    block.extend(protocol_block(libc::IPPROTO_UDP));
    block.push(no);
    let mut p = vec![
        statement(LOAD, NR),
        jump(IF_EQUAL, libc::SYS_socket as u32, 0, block.len() as u8),
    ];
    p.extend(block);
    p
}

/// Installs `program` on the calling process. For the child between
/// `fork` and `exec`: one `prctl`, no allocation. `no_new_privs` must
/// already be set.
pub fn install(program: &[sock_filter]) -> std::io::Result<()> {
    let fprog = libc::sock_fprog {
        len: program.len() as u16,
        filter: program.as_ptr() as *mut sock_filter,
    };
    // SAFETY: `fprog` points at `program`, which outlives the call; the
    // kernel copies it.
    let done = unsafe {
        libc::prctl(
            libc::PR_SET_SECCOMP,
            libc::SECCOMP_MODE_FILTER,
            &fprog as *const libc::sock_fprog,
        )
    };
    if done == -1 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_jump_lands_inside_the_program_and_it_ends_by_allowing() {
        for (sockets, by_path) in [
            (Sockets::None, true),
            (Sockets::Internet, false),
            (Sockets::Internet, true),
            (Sockets::Any, false),
        ] {
            let p = program(sockets, by_path);
            // The kernel's limit (BPF_MAXINSNS); jumps are relative and
            // each fits its byte (checked below).
            assert!(p.len() <= 4096, "{} instructions", p.len());
            for (at, op) in p.iter().enumerate() {
                if u32::from(op.code) & 0x07 == libc::BPF_JMP {
                    assert!(at + 1 + usize::from(op.jt.max(op.jf)) < p.len());
                }
            }
            let last = p.last().unwrap();
            assert_eq!(u32::from(last.code), RETURN);
            assert_eq!(last.k, libc::SECCOMP_RET_ALLOW);
        }
    }
}
