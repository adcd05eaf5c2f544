#ifndef CCLOUDSTORE_SHIMS_H
#define CCLOUDSTORE_SHIMS_H

/* What Swift's Glibc module does not export (GNU extensions, names that clash). */
int CCloudStoreShims_syncfs(int fd);
int CCloudStoreShims_flock(int fd, int operation);
/* 1 when this process has no program interpreter (a static executable: the auxiliary vector's
   AT_BASE is 0), 0 otherwise. */
int CCloudStoreShims_isStaticExecutable(void);
/* Renames `from` to `to` only when nothing has the name `to` (renameat2 with RENAME_NOREPLACE;
   rename(2) would replace an empty folder): 0, or -1 and errno (EEXIST when `to` exists). */
int CCloudStoreShims_renameNoReplace(const char *from, const char *to);
/* memrchr: the last `byte` in `length` bytes, or NULL. */
const void *CCloudStoreShims_memrchr(const void *bytes, int byte, unsigned long length);
/* An open-file-description lock on bytes [start, start + length): exclusive when `exclusive`,
   released otherwise; waits. Independent of flock() on local file systems. */
int CCloudStoreShims_rangeLock(int fd, long start, long length, int exclusive);

/* CRC-32C of `length` bytes, continuing from `crc` (pass 0xFFFFFFFF to start, and invert the
   result): the SSE 4.2 instruction where the CPU has it, 0 and *done = 0 where not. */
unsigned int CCloudStoreShims_crc32c(unsigned int crc, const unsigned char *bytes, unsigned long length, int *done);

/* The type, inode, size and device of `path`, or of the open file `fd` when `path` is NULL,
   without its times: statx asked for no times does not mark the file's times as seen. Where
   a file system keeps multigrain times (ext4 since Linux 6.13), a file whose times were seen
   takes a fine-grained time at its next change, and that moves on the coarse clock every
   other file's times are set from: stat a file written at every save and each fdatasync of
   the journal must write the journal's changed inode too (a second disk write). Falls back
   to stat where statx is missing. 0, or -1 and errno. */
int CCloudStoreShims_statIdentity(int fd, const char *path, unsigned int *mode,
                                  unsigned long long *inode, long long *size, unsigned long long *device);

/* The type (statfs f_type, a magic number) of the file system holding `path`, or -1 and errno. */
long long CCloudStoreShims_fileSystemType(const char *path);

/* The bytes an unprivileged user may still write on the file system holding `path` (statfs
   f_bavail blocks), or -1 and errno. */
long long CCloudStoreShims_freeBytes(const char *path);

/* A new file with no name in `directory` (O_TMPFILE), open for writing with `mode`: the fd, or
   -1 and errno (EOPNOTSUPP, EISDIR or EINVAL where the file system or kernel makes none). */
int CCloudStoreShims_openUnnamed(const char *directory, unsigned int mode);

/* Gives the unnamed file `fd` the name `path` (linkat through /proc/self/fd, which needs no
   privilege): 0, or -1 and errno (EEXIST when the name is taken, ENOENT without /proc). */
int CCloudStoreShims_linkUnnamed(int fd, const char *path);

/* Limits glibc's malloc to `count` arenas (mallopt M_ARENA_MAX); 1 on success, 0 where the
   C library has no such setting. */
int CCloudStoreShims_limitMallocArenas(int count);

/* Gives the memory malloc holds free back to the system (glibc malloc_trim(0), which also
   releases whole free pages inside the heap); 1 when some was given back, 0 otherwise or
   where the C library has no such call. */
int CCloudStoreShims_releaseFreedMemory(void);

/* The name of the next entry of the open directory `dir` (a DIR * from opendir), valid until the
   next call on `dir`; NULL at the end. The name is read where readdir left it: a struct dirent
   copied whole reads past the end of a short entry, beyond readdir's buffer. */
const char *CCloudStoreShims_nextName(void *dir);

#endif
