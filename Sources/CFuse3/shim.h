// libfuse3's low-level API for Swift: the version it is built against, and static inline
// wrappers for what Swift cannot call directly (macros, bitfields, variadic functions).
#ifndef CFUSE3_SHIM_H
#define CFUSE3_SHIM_H

#define FUSE_USE_VERSION 312
#include <fuse_lowlevel.h>
#include <sys/stat.h>
#include <string.h>

static inline void CFuse3_fi_set_keep_cache(struct fuse_file_info *fi, int on) { fi->keep_cache = on ? 1 : 0; }
static inline void CFuse3_fi_set_direct_io(struct fuse_file_info *fi, int on) { fi->direct_io = on ? 1 : 0; }
static inline void CFuse3_fi_set_noflush(struct fuse_file_info *fi, int on) { fi->noflush = on ? 1 : 0; }
static inline void CFuse3_fi_set_cache_readdir(struct fuse_file_info *fi, int on) { fi->cache_readdir = on ? 1 : 0; }
static inline void CFuse3_fi_set_nonseekable(struct fuse_file_info *fi, int on) { fi->nonseekable = on ? 1 : 0; }

/// Asks for the capabilities the view relies on; called from the init callback.
static inline void CFuse3_conn_init(struct fuse_conn_info *conn) {
    if (conn->capable & FUSE_CAP_READDIRPLUS) conn->want |= FUSE_CAP_READDIRPLUS;
    conn->want &= ~FUSE_CAP_READDIRPLUS_AUTO;
    if (conn->capable & FUSE_CAP_ATOMIC_O_TRUNC) conn->want |= FUSE_CAP_ATOMIC_O_TRUNC;
    if (conn->capable & FUSE_CAP_AUTO_INVAL_DATA) conn->want |= FUSE_CAP_AUTO_INVAL_DATA;
    conn->want &= ~FUSE_CAP_WRITEBACK_CACHE;
    if (conn->capable & FUSE_CAP_SPLICE_READ) conn->want &= ~FUSE_CAP_SPLICE_READ;
    conn->max_write = 1 << 20;
}

static inline struct stat CFuse3_zero_stat(void) { struct stat st; memset(&st, 0, sizeof st); return st; }
static inline struct fuse_entry_param CFuse3_zero_entry(void) { struct fuse_entry_param e; memset(&e, 0, sizeof e); return e; }
static inline struct fuse_lowlevel_ops CFuse3_zero_ops(void) { struct fuse_lowlevel_ops o; memset(&o, 0, sizeof o); return o; }
#endif
