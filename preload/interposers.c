/* The interposers each preload shim exports; they answer from the one
 * registry in libtally_preload.so (see tally_preload.h). */
#include "tally_preload.h"

/*
 * dlsym. dlsym(RTLD_NEXT) looks "after the caller", and glibc finds the
 * caller from the return address: that case jumps to libc's dlsym with the
 * stack untouched. Every other handle goes to tally_preload_dlsym_from with
 * the caller's return address as third argument, since dlsym(RTLD_DEFAULT)
 * searches the caller's scope too.
 */
__asm__(".text\n"
        ".globl dlsym\n"
        ".type dlsym, @function\n"
        "dlsym:\n"
        ".cfi_startproc\n"
        "cmpq $-1, %rdi\n"
        "je .Ltally_dlsym_next\n"
        "movq (%rsp), %rdx\n"
        "jmp tally_preload_dlsym_from@PLT\n"
        ".Ltally_dlsym_next:\n"
        "pushq %rdi\n"
        ".cfi_adjust_cfa_offset 8\n"
        "pushq %rsi\n"
        ".cfi_adjust_cfa_offset 8\n"
        "subq $8, %rsp\n"
        ".cfi_adjust_cfa_offset 8\n"
        "call tally_preload_libc_dlsym_address@PLT\n"
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
