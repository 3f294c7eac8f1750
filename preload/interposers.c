/* The interposers each preload shim exports: dlsym and GetProcAddress
 * answer from the one registry in libtally_preload.so (see
 * tally_preload.h); _exit finishes the shared device first. */
#include <dlfcn.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "tally/device.h"
#include "tally_preload.h"

/*
 * dlsym. glibc finds the caller of dlsym from the return address: for
 * RTLD_NEXT ("after the caller") and for RTLD_DEFAULT (the caller's scope,
 * which for a library opened with RTLD_LOCAL includes its own group). So
 * those calls reach libc's dlsym with the stack untouched: RTLD_NEXT always,
 * RTLD_DEFAULT for every name no shim registered (a registered name, a GL,
 * EGL or GLX function, goes to tally_preload_dlsym, whose answer does not
 * depend on the caller). Every other handle goes to tally_preload_dlsym.
 */
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

TALLY_PRELOAD_API void *glXGetProcAddress(const unsigned char *name)
{
    return tally_preload_glx_get_proc_address((const char *)name);
}

TALLY_PRELOAD_API void *glXGetProcAddressARB(const unsigned char *name)
{
    return tally_preload_glx_get_proc_address((const char *)name);
}

TALLY_PRELOAD_API void *eglGetProcAddress(const char *name)
{
    return tally_preload_egl_get_proc_address(name);
}

/*
 * _exit and _Exit end the process without its exit handlers: a program that
 * ends that way on purpose (after its own cleanup, or in a forked child that
 * drew) still gets its report and trace finished first. exit() does not come
 * here: glibc calls its own _exit directly. A vfork child, which shares its
 * parent's memory, is told apart by its process id and touches nothing.
 */
static _Noreturn void end_process(const char *name, int status)
{
    tally_device_exit_shared();
    void (*next)(int) = (void (*)(int))dlsym(RTLD_NEXT, name);
    if (next)
        next(status);
    for (;;)
        syscall(SYS_exit_group, status);
}

TALLY_PRELOAD_API void _exit(int status)
{
    end_process("_exit", status);
}

TALLY_PRELOAD_API void _Exit(int status)
{
    end_process("_Exit", status);
}
