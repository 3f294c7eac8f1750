/* The exported dlsym, in assembly per CPU (x86-64, arm64): glibc finds the
 * caller from the return address, which C cannot pass on untouched. */
#include "tally_preload.h"

/*
 * glibc's dlsym finds its caller from the return address: for RTLD_NEXT
 * ("after the caller") and for RTLD_DEFAULT (the caller's scope, which for a
 * library opened with RTLD_LOCAL includes its own group). So those calls
 * reach libc's dlsym with the stack and return address untouched: RTLD_NEXT
 * always, RTLD_DEFAULT for every name no shim registered (a registered name,
 * a GL, EGL or GLX function, goes to tally_preload_dlsym, whose answer does
 * not depend on the caller). Every other handle goes to tally_preload_dlsym.
 * Each CPU's entry saves the arguments, asks lookup.c where to go, restores
 * them and jumps there: a tail call, so the callee sees the program's
 * return address.
 *
 * On any other CPU the shims export no dlsym (a portable C one would call
 * libc with tally as the caller, changing what RTLD_NEXT finds): lookups of
 * GL and EGL functions by dlsym then reach the driver unwrapped, and
 * GetProcAddress, which C can interpose, still answers with the wrappers.
 */
#if defined(__x86_64__)

__asm__(".text\n"
        ".globl dlsym\n"
        ".type dlsym, @function\n"
        "dlsym:\n"
        ".cfi_startproc\n"
        "cmpq $-1, %rdi\n"
        "je .Ltally_dlsym_next\n"
        "testq %rdi, %rdi\n"
        "je .Ltally_dlsym_default\n"
        "jmp tally_preload_dlsym@PLT\n"
        ".Ltally_dlsym_default:\n"
        "pushq %rdi\n"
        ".cfi_adjust_cfa_offset 8\n"
        "pushq %rsi\n"
        ".cfi_adjust_cfa_offset 8\n"
        "subq $8, %rsp\n"
        ".cfi_adjust_cfa_offset 8\n"
        "movq %rsi, %rdi\n"
        "call tally_preload_default_dlsym@PLT\n"
        "jmp .Ltally_dlsym_jump\n"
        ".Ltally_dlsym_next:\n"
        "pushq %rdi\n"
        ".cfi_adjust_cfa_offset 8\n"
        "pushq %rsi\n"
        ".cfi_adjust_cfa_offset 8\n"
        "subq $8, %rsp\n"
        ".cfi_adjust_cfa_offset 8\n"
        "call tally_preload_libc_dlsym_address@PLT\n"
        ".Ltally_dlsym_jump:\n"
        "addq $8, %rsp\n"
        ".cfi_adjust_cfa_offset -8\n"
        "popq %rsi\n"
        ".cfi_adjust_cfa_offset -8\n"
        "popq %rdi\n"
        ".cfi_adjust_cfa_offset -8\n"
        "jmp *%rax\n"
        ".cfi_endproc\n"
        ".size dlsym, .-dlsym\n");

#elif defined(__aarch64__)

/* RTLD_NEXT is -1 and RTLD_DEFAULT 0 (glibc's dlfcn.h). The return address
 * is x30 (LR): it is saved with the frame and restored before the jump,
 * which goes through x16, the register BTI allows an indirect branch to a
 * function's entry through. */
__asm__(".text\n"
        ".globl dlsym\n"
        ".type dlsym, %function\n"
        "dlsym:\n"
        ".cfi_startproc\n"
        "cmn x0, #1\n"
        "b.eq .Ltally_dlsym_save\n"
        "cbz x0, .Ltally_dlsym_save\n"
        "b tally_preload_dlsym\n"
        ".Ltally_dlsym_save:\n"
        "stp x29, x30, [sp, #-32]!\n"
        ".cfi_def_cfa_offset 32\n"
        ".cfi_offset 29, -32\n"
        ".cfi_offset 30, -24\n"
        "mov x29, sp\n"
        "stp x0, x1, [sp, #16]\n"
        "cbz x0, .Ltally_dlsym_default\n"
        "bl tally_preload_libc_dlsym_address\n"
        "b .Ltally_dlsym_jump\n"
        ".Ltally_dlsym_default:\n"
        "mov x0, x1\n"
        "bl tally_preload_default_dlsym\n"
        ".Ltally_dlsym_jump:\n"
        "mov x16, x0\n"
        "ldp x0, x1, [sp, #16]\n"
        "ldp x29, x30, [sp], #32\n"
        ".cfi_restore 29\n"
        ".cfi_restore 30\n"
        ".cfi_def_cfa_offset 0\n"
        "br x16\n"
        ".cfi_endproc\n"
        ".size dlsym, .-dlsym\n");

#endif
