//! A seccomp filter for the programs toolcell starts: the system calls no
//! granted program needs, refused with `EPERM` (the program sees an
//! ordinary error and goes on), everything else allowed.
//!
//! Refused: tracing and reading other processes (`ptrace`,
//! `process_vm_readv`), the kernel's own controls (modules, `kexec`, `bpf`,
//! `perf_event_open`, `reboot`, the clock, swap, accounting, `syslog`),
//! mounting and new namespaces (`mount`, `unshare`, `setns`, `clone` with a
//! namespace flag; `clone3`, whose flags a filter cannot read, answers
//! `ENOSYS` so the C library falls back to `clone`), file handles that skip
//! path checks (`open_by_handle_at`), the kernel keyring, `userfaultfd`,
//! `io_uring` (which runs system calls the filter never sees), typing
//! into a terminal (`ioctl` `TIOCSTI`, `TIOCLINUX`), and the other system
//! call tables (32-bit and x32 calls on x86-64). Without a network grant,
//! `socket` too (`EACCES`): no socket of any family, so neither the
//! network nor the UNIX sockets of local services; `socketpair` stays, for
//! pipes between a program's own processes.
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

/// The filter: refuse what is listed above; with `sockets` false, every
/// `socket` call too.
pub fn program(sockets: bool) -> Vec<sock_filter> {
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
    if !sockets {
        refuse_call(libc::SYS_socket, libc::EACCES);
    }
    // clone: refused with a namespace flag.
    p.extend([
        jump(IF_EQUAL, libc::SYS_clone as u32, 0, 3),
        statement(LOAD, ARG0_LOW),
        jump(IF_ANY_BIT, CLONE_NEW_ANY, 0, 1),
        refuse(libc::EPERM),
    ]);
    // ioctl: the two requests that type into a terminal. The number is
    // loaded again: the clone branch may have replaced it.
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
        for sockets in [true, false] {
            let p = program(sockets);
            assert!(p.len() < 256, "short enough for one-byte jumps");
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
