/* The interposers each preload shim exports; they answer from the one
 * registry in libtally_preload.so (see tally_preload.h). */
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
