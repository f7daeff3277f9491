/*
 * faultrun_cfi.h — where a libc function keeps its return address, from the
 * call-frame information (.eh_frame) of the file.
 */
#ifndef FAULTRUN_CFI_H
#define FAULTRUN_CFI_H

#include <stdbool.h>
#include <stdint.h>

/* For the code at file-relative address PC (a virtual address of the ELF
 * file PATH, load bias removed): the offset from the stack pointer to the
 * return address, when the frame's CFA is the stack pointer plus a
 * constant there.  false when the file has no such rule for PC (no CFI, a
 * CFA in another register or a DWARF expression): the caller falls back
 * to a scan of the stack. */
bool fr_cfi_ra_offset(const char *path, uint64_t pc, int64_t *ra_off);

/* The smallest p_vaddr - p_offset mapping: the virtual address of file
 * offset OFF, for the load bias (false if PATH is not a readable ELF file
 * or OFF is in no PT_LOAD). */
bool fr_cfi_vaddr_of_offset(const char *path, uint64_t off, uint64_t *vaddr);

#endif
