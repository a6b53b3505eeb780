/* Make this process see an AVX2-only x86-64 CPU: no AVX-512, no AMX, no VNNI.
 *
 * Loaded with LD_PRELOAD by bench/_avx2.py, so that a benchmark run on an AVX-512
 * machine exercises the kernels a laptop's AVX2 CPU gets. ONNX Runtime picks its
 * matrix kernels from CPUID and has no setting to pick others, so CPUID itself is
 * answered: Linux's CPUID faulting (arch_prctl ARCH_SET_CPUID, on CPUs listing
 * `cpuid_fault`) turns each CPUID instruction into SIGSEGV, and the handler runs the
 * real instruction with faulting briefly off, clears the feature bits above and
 * steps over it. The setting is inherited by threads and reset by execve, so every
 * process started with the preload sets it again.
 *
 * What it cannot change: code that chose its path before this constructor ran (the
 * dynamic loader's own string functions), and the core's microarchitecture. Figures
 * measured under it are AVX2 kernels on this CPU, not another vendor's AVX2 CPU.
 */
#define _GNU_SOURCE
#include <asm/prctl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

static struct sigaction previous;

static long arch_prctl(int code, unsigned long arg) { return syscall(SYS_arch_prctl, code, arg); }

static void cpuid(uint32_t leaf, uint32_t sub, uint32_t out[4]) {
    __asm__ volatile("cpuid" : "=a"(out[0]), "=b"(out[1]), "=c"(out[2]), "=d"(out[3]) : "a"(leaf), "c"(sub));
}

static void hide(uint32_t leaf, uint32_t sub, uint32_t r[4]) {
    if (leaf == 7 && sub == 0) {
        /* EBX: AVX512F, DQ, IFMA, PF, ER, CD, BW, VL */
        r[1] &= ~((1u << 16) | (1u << 17) | (1u << 21) | (1u << 26) | (1u << 27) | (1u << 28) | (1u << 30) | (1u << 31));
        /* ECX: AVX512_VBMI, VBMI2, VNNI, BITALG, VPOPCNTDQ */
        r[2] &= ~((1u << 1) | (1u << 6) | (1u << 11) | (1u << 12) | (1u << 14));
        /* EDX: AVX512_4VNNIW, 4FMAPS, VP2INTERSECT, AMX-BF16, AVX512_FP16, AMX-TILE, AMX-INT8 */
        r[3] &= ~((1u << 2) | (1u << 3) | (1u << 8) | (1u << 22) | (1u << 23) | (1u << 24) | (1u << 25));
    } else if (leaf == 7 && sub == 1) {
        /* EAX: AVX-VNNI, AVX512_BF16, AMX-FP16, AVX-IFMA; EDX: AVX-VNNI-INT8, AVX-NE-CONVERT */
        r[0] &= ~((1u << 4) | (1u << 5) | (1u << 21) | (1u << 23));
        r[3] &= ~((1u << 4) | (1u << 5));
    } else if (leaf == 0xd && sub == 0) {
        /* XCR0 components the OS supports: leave out opmask, ZMM and tile state */
        r[0] &= ~((1u << 5) | (1u << 6) | (1u << 7) | (1u << 17) | (1u << 18));
    }
}

static void on_segv(int sig, siginfo_t *info, void *context) {
    ucontext_t *uc = (ucontext_t *)context;
    greg_t *regs = uc->uc_mcontext.gregs;
    const unsigned char *ip = (const unsigned char *)regs[REG_RIP];
    if (ip[0] != 0x0f || ip[1] != 0xa2) { /* not CPUID: a real fault, handled as before */
        sigaction(SIGSEGV, &previous, NULL);
        (void)sig;
        (void)info;
        return; /* the instruction runs again and faults under the previous handler */
    }
    uint32_t leaf = (uint32_t)regs[REG_RAX], sub = (uint32_t)regs[REG_RCX], r[4];
    arch_prctl(ARCH_SET_CPUID, 1);
    cpuid(leaf, sub, r);
    arch_prctl(ARCH_SET_CPUID, 0);
    hide(leaf, sub, r);
    regs[REG_RAX] = r[0];
    regs[REG_RBX] = r[1];
    regs[REG_RCX] = r[2];
    regs[REG_RDX] = r[3];
    regs[REG_RIP] += 2;
}

__attribute__((constructor)) static void start(void) {
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_sigaction = on_segv;
    action.sa_flags = SA_SIGINFO | SA_NODEFER;
    sigemptyset(&action.sa_mask);
    if (sigaction(SIGSEGV, &action, &previous) != 0 || arch_prctl(ARCH_SET_CPUID, 0) != 0) {
        fprintf(stderr, "avx2_only: this CPU or kernel has no CPUID faulting; refusing to run unmasked\n");
        _exit(70);
    }
}
